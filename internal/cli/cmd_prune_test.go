package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestPruneRemovesOnlyOldArchives(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "old-done")
	h.OK("done", "old-done")
	h.OK("archive", "old-done") // archived at t0
	h.OK("start", "crashed-work", "--step", "a")
	h.Now = t0.Add(24 * time.Hour)
	h.OK("takeover", "crashed-work", "--agent", "C") // archives crashed-work_crashed_<t0+24h>
	h.OK("start", "live")
	h.Now = t0.Add(40 * 24 * time.Hour)
	h.OK("start", "recent")
	h.OK("done", "recent")
	h.OK("archive", "recent") // archived at t0+40d
	all := func() []string {
		list, err := ckpt.ListAll(context.Background(), h.Store, ckpt.Filter{IncludeArchived: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range list {
			ids = append(ids, c.ID)
		}
		return ids
	}
	before := strings.Join(all(), " ")
	takenOver := fmt.Sprintf("crashed-work_crashed_%d", t0.Add(24*time.Hour).Unix())

	out := h.OK("prune", "--older-than", "30d", "--dry-run")
	want := "would remove " + takenOver + "  (archived crashed at 2026-01-16T14:30:00Z, 1 revision)\n" +
		"would remove old-done  (archived complete at 2026-01-15T14:30:00Z, 3 revisions)\n" +
		"would remove 2 archived checkpoints (dry run: nothing deleted; run again without --dry-run to delete)\n"
	if out != want {
		t.Errorf("dry run:\n%s\nwant:\n%s", out, want)
	}
	if after := strings.Join(all(), " "); after != before {
		t.Fatalf("a dry run deleted: %s, was %s", after, before)
	}

	js := h.OK("prune", "--older-than", "30d", "--json")
	var got []ckpt.Pruned
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != takenOver || !got[0].Removed || got[1].ID != "old-done" || got[1].Reason != "complete" || got[1].Revisions != 3 {
		t.Errorf("prune --json: %+v", got)
	}
	if after := strings.Join(all(), " "); after != "crashed-work live recent" {
		t.Errorf("after prune: %s", after)
	}
	for _, id := range []string{"old-done", takenOver} {
		if _, err := h.Store.History(context.Background(), id, 1, 0); ExitCode(err) != ExitNotFound {
			t.Errorf("%s's history survived the prune: %v", id, err)
		}
	}
	if out := h.OK("prune", "--older-than", "30d"); out != "nothing to prune: no checkpoint was archived more than 30d ago\n" {
		t.Errorf("second prune: %q", out)
	}
	h.Now = h.Now.Add(2 * time.Hour)
	out = h.OK("prune", "--older-than", "1h")
	if out != "removed recent  (archived complete at 2026-02-24T14:30:00Z, 3 revisions)\nremoved 1 archived checkpoint and its history\n" {
		t.Errorf("prune --older-than 1h: %q", out)
	}
	if after := strings.Join(all(), " "); after != "crashed-work live" {
		t.Errorf("prune touched live work: %s", after)
	}

	msg := h.Fails(ExitUsage, "prune")
	if !strings.Contains(msg, "prune needs --older-than DURATION") {
		t.Errorf("prune without --older-than: %q", msg)
	}
	h.Fails(ExitUsage, "prune", "--older-than", "0d")
	h.Fails(ExitUsage, "prune", "--older-than", "old")
}
