package mcp

import (
	"context"
	"os"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/process"
)

// TestToolsSpeakPresence: ckpt_show, ckpt_list and ckpt_stale give the
// presence every view shows: waiting with its reason, dead at once for a
// process recorded with a start time it never had (a reused PID).
func TestToolsSpeakPresence(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "w", "title": "W"})
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "d", "title": "D"})
	ctx := context.Background()
	if err := f.store.Beat(ctx, "w", ckpt.Signal{At: t0, State: ckpt.PresenceWaiting, Reason: "idle_prompt"}); err != nil {
		t.Fatal(err)
	}
	self := process.Of(os.Getpid())
	if self == nil {
		t.Skip("needs /proc to record a process")
	}
	reused := *self
	reused.Start += "0"
	if err := f.store.Beat(ctx, "d", ckpt.Signal{At: t0, State: ckpt.PresenceWorking, Process: &reused}); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(t0.Add(time.Minute))
	if show := ok[ShowOutput](t, f, "ckpt_show", map[string]any{"id": "w"}); show.Presence != "waiting" || show.PresenceWhy != "idle_prompt" || show.Liveness != "live" {
		t.Errorf("ckpt_show w: %+v", show)
	}
	if show := ok[ShowOutput](t, f, "ckpt_show", map[string]any{"id": "d"}); show.Presence != "dead" || show.Liveness != "stale" {
		t.Errorf("ckpt_show d: presence %q liveness %q", show.Presence, show.Liveness)
	}
	// An older revision has no presence now, as in ckpt show --rev N --json.
	if show := ok[ShowOutput](t, f, "ckpt_show", map[string]any{"id": "w", "rev": 1}); show.Presence != "-" || show.Liveness != "-" || show.Rev != 1 {
		t.Errorf("ckpt_show w at rev 1: presence %q liveness %q rev %d", show.Presence, show.Liveness, show.Rev)
	}
	list := ok[ListOutput](t, f, "ckpt_list", map[string]any{})
	if len(list.Checkpoints) != 2 || list.Checkpoints[0].Presence != "dead" || list.Checkpoints[1].Presence != "waiting" {
		t.Errorf("ckpt_list: %+v", list.Checkpoints)
	}
	stale := ok[StaleOutput](t, f, "ckpt_stale", map[string]any{})
	if stale.Count != 1 || stale.Checkpoints[0].ID != "d" || stale.Checkpoints[0].Presence != "dead" {
		t.Errorf("ckpt_stale: %+v", stale)
	}
	// ckpt_why names the rule, the process and what would change it.
	if why := ok[WhyOutput](t, f, "ckpt_why", map[string]any{"id": "d"}); why.Presence != "dead" || why.Rule != 10 || why.ProcessIs != "gone" ||
		why.Process != reused.String() || why.Change == "" {
		t.Errorf("ckpt_why d: %+v", why)
	}
	if why := ok[WhyOutput](t, f, "ckpt_why", map[string]any{"id": "w"}); why.Presence != "waiting" || why.For != "person" || why.Why != "idle_prompt" || why.Rule != 12 {
		t.Errorf("ckpt_why w: %+v", why)
	}
}
