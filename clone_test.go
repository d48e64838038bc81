package ckpt_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

// richCheckpoint sets every kind of field a Checkpoint has.
func richCheckpoint() *ckpt.Checkpoint {
	now := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	score := 4.5
	return &ckpt.Checkpoint{
		ID: "a/b", Rev: 7, Parent: "p", Labels: []string{"x", "y"},
		Agent: ckpt.Agent{ID: "a", Type: "t", Name: "n"}, Session: ckpt.Session{ID: "s", Number: 2, StartedAt: now},
		Title: "t", Status: ckpt.StatusBlocked,
		Steps:        []ckpt.Step{{ID: "s1", Status: ckpt.StepDone, StartedAt: &now, CompletedAt: &now}},
		Progress:     ckpt.Progress{Done: 1, Total: 2, Percent: 50},
		Acceptance:   []ckpt.Criterion{{ID: "c", Met: true, VerifiedAt: &now}},
		Decisions:    []ckpt.Decision{{At: now, Text: "d"}},
		Blockers:     []ckpt.Blocker{{ID: "b", Text: "b", Since: now, ClearedAt: &now}},
		Errors:       []ckpt.ErrorItem{{At: now, Message: "m", ClearedAt: &now}},
		Files:        ckpt.Files{Created: []string{"c"}, Modified: []string{"m"}},
		Resume:       ckpt.Resume{Resumable: true, NextSteps: []string{"n"}},
		ReviewScores: map[string]*float64{"r": &score, "none": nil},
		Meta:         map[string]json.RawMessage{"k": json.RawMessage(`{"v":[1]}`)},
		Heartbeat:    ckpt.Heartbeat{LastBeat: now, Interval: ckpt.Duration(time.Minute)},
		Archived:     &ckpt.Archive{Reason: "r", At: now},
		StartedAt:    now, UpdatedAt: now, CompletedAt: &now,
	}
}

// scribble overwrites every string, number, bool and byte reachable from v.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			scribble(it.Value())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if v.CanSet() {
				v.Set(reflect.ValueOf(time.Unix(0, 0)))
			}
			return
		}
		for i := range v.NumField() {
			scribble(v.Field(i))
		}
	case reflect.String:
		v.SetString("scribbled")
	case reflect.Int, reflect.Int64:
		v.SetInt(-1)
	case reflect.Uint8:
		v.SetUint('#')
	case reflect.Float64:
		v.SetFloat(-1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	}
}

func TestCloneIsEqualAndIndependent(t *testing.T) {
	orig := richCheckpoint()
	before, _ := json.Marshal(orig)
	cp := orig.Clone()
	if d := cmp.Diff(orig, cp); d != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", d)
	}
	scribble(reflect.ValueOf(cp))
	if after, _ := json.Marshal(orig); string(after) != string(before) {
		t.Errorf("changing the copy changed the original:\n%s\n%s", before, after)
	}
}
