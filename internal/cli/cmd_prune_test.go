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
	h.ok("start", "old-done")
	h.ok("done", "old-done")
	h.ok("archive", "old-done") // archived at t0
	h.ok("start", "crashed-work", "--step", "a")
	h.now = t0.Add(24 * time.Hour)
	h.ok("takeover", "crashed-work", "--agent", "C") // archives crashed-work_crashed_<t0+24h>
	h.ok("start", "live")
	h.now = t0.Add(40 * 24 * time.Hour)
	h.ok("start", "recent")
	h.ok("done", "recent")
	h.ok("archive", "recent") // archived at t0+40d
	all := func() []string {
		list, err := ckpt.ListAll(context.Background(), h.store, ckpt.Filter{IncludeArchived: true})
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

	out := h.ok("prune", "--older-than", "30d", "--dry-run")
	want := "would remove " + takenOver + "  (archived crashed at 2026-01-16T14:30:00Z, 1 revision)\n" +
		"would remove old-done  (archived complete at 2026-01-15T14:30:00Z, 3 revisions)\n" +
		"would remove 2 archived checkpoints (dry run: nothing deleted; run again without --dry-run to delete)\n"
	if out != want {
		t.Errorf("dry run:\n%s\nwant:\n%s", out, want)
	}
	if after := strings.Join(all(), " "); after != before {
		t.Fatalf("a dry run deleted: %s, was %s", after, before)
	}

	js := h.ok("prune", "--older-than", "30d", "--json")
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
		if _, err := h.store.History(context.Background(), id, 1, 0); ExitCode(err) != ExitNotFound {
			t.Errorf("%s's history survived the prune: %v", id, err)
		}
	}
	if out := h.ok("prune", "--older-than", "30d"); out != "nothing to prune: no checkpoint was archived more than 30d ago\n" {
		t.Errorf("second prune: %q", out)
	}
	h.now = h.now.Add(2 * time.Hour)
	out = h.ok("prune", "--older-than", "1h")
	if out != "removed recent  (archived complete at 2026-02-24T14:30:00Z, 3 revisions)\nremoved 1 archived checkpoint and its history\n" {
		t.Errorf("prune --older-than 1h: %q", out)
	}
	if after := strings.Join(all(), " "); after != "crashed-work live" {
		t.Errorf("prune touched live work: %s", after)
	}

	msg := h.fails(ExitUsage, "prune")
	if !strings.Contains(msg, "prune needs --older-than DURATION") {
		t.Errorf("prune without --older-than: %q", msg)
	}
	h.fails(ExitUsage, "prune", "--older-than", "0d")
	h.fails(ExitUsage, "prune", "--older-than", "old")
}
