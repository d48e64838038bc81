package ckpt_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
	"github.com/ckpt-dev/ckpt/memstore"
)

func TestStaleReportOrdersStaleFirstThenWarnByID(t *testing.T) {
	now := time.Date(2026, 1, 15, 16, 0, 0, 0, time.UTC)
	sum := func(id string, silent time.Duration, st ckpt.Status, a ckpt.Agent) ckpt.Summary {
		return ckpt.Summary{ID: id, Status: st, Agent: a, UpdatedAt: now.Add(-silent), Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(10 * time.Minute)}}
	}
	list := []ckpt.Summary{
		sum("a-warn", 25*time.Minute, ckpt.StatusInProgress, ckpt.Agent{Name: "Ann"}),
		sum("b-live", time.Minute, ckpt.StatusInProgress, ckpt.Agent{}),
		sum("c-stale", 2*time.Hour, ckpt.StatusInProgress, ckpt.Agent{ID: "c1", Name: "Cy"}),
		sum("d-done", 5*time.Hour, ckpt.StatusDone, ckpt.Agent{}),
		sum("e-stale", 50*time.Minute, ckpt.StatusInProgress, ckpt.Agent{}),
		sum("f-warn", 30*time.Minute, ckpt.StatusInProgress, ckpt.Agent{}),
	}
	r := testsupport.JudgeAll(list, now, ckpt.Thresholds{}, nil)
	var got []string
	for _, e := range r.Entries {
		got = append(got, e.ID+":"+string(e.Liveness))
	}
	want := []string{"c-stale:stale", "e-stale:stale", "a-warn:warn", "f-warn:warn"}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entries %v, want %v", got, want)
		}
	}
	if r.Live != 5 || r.Stale != 2 || r.Warn != 2 {
		t.Errorf("counts live %d stale %d warn %d, want 5, 2, 2", r.Live, r.Stale, r.Warn)
	}
	if r.Entries[0].Agent != "c1" || r.Entries[2].Agent != "Ann" {
		t.Errorf("agent names %q, %q: want the ID, else the name", r.Entries[0].Agent, r.Entries[2].Agent)
	}
	if e := r.Entries[0]; e.SilentSeconds != 7200 || e.WarnAfter.D() != 20*time.Minute || e.StaleAfter.D() != 40*time.Minute || e.Summary.ID != "c-stale" {
		t.Errorf("entry %+v", e)
	}
}

// TestStaleReportSpeaksPresence: a dead agent is reported at once (as
// stale, exit 10), while busy, waiting and ended ones are not, however
// quiet.
func TestStaleReportSpeaksPresence(t *testing.T) {
	now := time.Date(2026, 1, 15, 16, 0, 0, 0, time.UTC)
	sum := func(id string, pid int, silent time.Duration, st ckpt.Status, p ckpt.PresenceState) ckpt.Summary {
		at := now.Add(-silent)
		return ckpt.Summary{ID: id, Status: st, UpdatedAt: at, Heartbeat: ckpt.Heartbeat{LastBeat: at, Interval: ckpt.Duration(10 * time.Minute),
			Presence: &ckpt.Presence{State: p, Since: at, Reason: "r", Process: &ckpt.Process{Host: "h", PID: pid, Start: "1"}}}}
	}
	list := []ckpt.Summary{
		sum("busy", 1, 30*time.Minute, ckpt.StatusInProgress, ckpt.PresenceBusy),
		sum("dead", 7, time.Minute, ckpt.StatusInProgress, ckpt.PresenceWorking),
		sum("ended", 7, 9*time.Hour, ckpt.StatusInProgress, ckpt.PresenceEnded),
		sum("paused", 7, 9*time.Hour, ckpt.StatusWaiting, ""),
	}
	alive := func(p *ckpt.Process) (bool, bool) { return p.PID != 7, true }
	r := testsupport.JudgeAll(list, now, ckpt.Thresholds{}, alive)
	if len(r.Entries) != 1 || r.Entries[0].ID != "dead" || r.Entries[0].Presence != ckpt.PresenceDead || r.Entries[0].Liveness != ckpt.Stale ||
		r.Entries[0].Why != "process 7 on h is gone, last reported working (r)" {
		t.Fatalf("entries %+v, want only dead", r.Entries)
	}
	if r.Live != 4 || r.Stale != 1 || r.Warn != 0 {
		t.Errorf("counts live %d stale %d warn %d, want 4, 1, 0", r.Live, r.Stale, r.Warn)
	}
}

// TestStaleFromJudgesEveryPage: judged page by page from a store, the
// report of more checkpoints than one page holds is the report of the
// whole listing, and a silent entry's summary outlives its page.
func TestStaleFromJudgesEveryPage(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	st := memstore.New()
	const n = ckpt.MaxPageSize + 500
	for i := range n {
		st.SetClock(func() time.Time { return t0.Add(time.Duration(i) * time.Second) })
		status := ckpt.StatusInProgress
		if i%7 == 0 {
			status = ckpt.StatusDone
		}
		e := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Status: &status}})
		if _, err := st.Append(ctx, fmt.Sprintf("p/%05d", i), e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// Silent for 40 to 65 minutes: warn past 30, stale past 60 (the
	// default 15-minute interval).
	now := t0.Add(n*time.Second + 40*time.Minute)
	all, err := ckpt.ListAll(ctx, st, ckpt.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	want := testsupport.JudgeAll(all, now, ckpt.Thresholds{}, nil)
	got, err := ckpt.StaleFrom(ctx, st, ckpt.Filter{}, now, ckpt.Thresholds{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Live != want.Live || got.Warn != want.Warn || got.Stale != want.Stale || len(got.Entries) != len(want.Entries) {
		t.Fatalf("paged report: live %d warn %d stale %d (%d entries); whole listing: %d %d %d (%d)",
			got.Live, got.Warn, got.Stale, len(got.Entries), want.Live, want.Warn, want.Stale, len(want.Entries))
	}
	if want.Live != n-(n+6)/7 || want.Stale == 0 || want.Warn == 0 {
		t.Fatalf("the fixture judges live %d, stale %d, warn %d: want every live one, some of each", want.Live, want.Stale, want.Warn)
	}
	for i := range want.Entries {
		g, w := got.Entries[i], want.Entries[i]
		if g.ID != w.ID || g.Liveness != w.Liveness || g.Summary.ID != g.ID || g.SilentSeconds != w.SilentSeconds {
			t.Fatalf("entry %d: %+v, want %+v", i, g, w)
		}
	}
}
