package plan

import (
	"encoding/json"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestTracks(t *testing.T) {
	meta := func(p string) *ckpt.Checkpoint {
		raw, _ := json.Marshal(map[string]string{"planPath": p})
		return &ckpt.Checkpoint{Meta: map[string]json.RawMessage{"plan": raw}}
	}
	cases := []struct {
		c    *ckpt.Checkpoint
		path string
		want bool
	}{
		{meta("/work/app/plans/a/plan.md"), "/work/app/plans/a/plan.md", true},
		{meta("plans/a/plan.md"), "/work/app/plans/a/plan.md", true},
		{meta("/work/app/plans/a/../a/plan.md"), "/work/app/plans/a/plan.md", true},
		{meta("/work/app/plans/b/plan.md"), "/work/app/plans/a/plan.md", false},
		{meta(""), "/work/app/plan.md", false},
		{&ckpt.Checkpoint{}, "/work/app/plan.md", false},
		{&ckpt.Checkpoint{Meta: map[string]json.RawMessage{"plan": json.RawMessage(`"x"`)}}, "/work/app/plan.md", false},
	}
	for i, tc := range cases {
		if got := Tracks(tc.c, "/work/app", tc.path); got != tc.want {
			t.Errorf("case %d: Tracks(%s) = %v, want %v", i, tc.path, got, tc.want)
		}
	}
}
