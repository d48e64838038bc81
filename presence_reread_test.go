package ckpt_test

import (
	"context"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestRereadDeadSeesTheLateEnd: a one-off view reads a session as working,
// its SessionEnd lands, its process exits, then the view probes the
// process: without a fresh read it would show dead. RereadDead puts the
// fresh record in its place, which reads ended; a working session stays
// as it was read.
func TestRereadDeadSeesTheLateEnd(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	now := time.Now()
	proc := func(pid int) *ckpt.Process { return &ckpt.Process{Host: "h", PID: pid, Start: "1"} }
	for i, id := range []string{"ends", "works"} {
		e := ckpt.MustEvent(ckpt.EventCreated, now.Add(-time.Minute), ckpt.Actor{}, ckpt.Created{})
		if _, err := s.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Beat(ctx, id, ckpt.Signal{At: now.Add(-time.Second), State: ckpt.PresenceWorking, Process: proc(7 + i), Session: "s1"}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := ckpt.GetAll(ctx, s, ckpt.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	sums, err := ckpt.ListAll(ctx, s, ckpt.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Beat(ctx, "ends", ckpt.Signal{At: now, State: ckpt.PresenceEnded, Reason: "SessionEnd", Process: proc(7), Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	gone := func(p *ckpt.Process) (bool, bool) { return p.PID != 7, true }
	state := func(s ckpt.Summary) ckpt.PresenceState {
		return ckpt.PresenceOf(&s, now, ckpt.Thresholds{}, gone).State
	}
	if got := state(list[0].Summary()); got != ckpt.PresenceDead {
		t.Fatalf("before the re-read the stale record reads %s, want dead (the race this guards against)", got)
	}
	ckpt.RereadDead(ctx, s, list, now, ckpt.Thresholds{}, gone)
	ckpt.RereadDeadSummaries(ctx, s, sums, now, ckpt.Thresholds{}, gone)
	for i, want := range []ckpt.PresenceState{ckpt.PresenceEnded, ckpt.PresenceWorking} {
		if got := state(list[i].Summary()); got != want {
			t.Errorf("RereadDead: %s reads %s, want %s", list[i].ID, got, want)
		}
		if got := state(sums[i]); got != want {
			t.Errorf("RereadDeadSummaries: %s reads %s, want %s", sums[i].ID, got, want)
		}
	}
}
