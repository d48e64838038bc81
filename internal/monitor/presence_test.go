package monitor_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/monitor"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestPresenceTransitionsWithFakeClock: the monitor reports presence
// changes once each (busy counts as working: a tool call is not news), a
// dead agent at the next look, a session that ended never as stale. The
// monitor reads only what may have changed at each look (see Tick).
func TestPresenceTransitionsWithFakeClock(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	clk := &clock{now: t0}
	s.SetClock(clk.Now)
	start(t, s, "a", 5*time.Minute)
	start(t, s, "b", 5*time.Minute)
	procA := &ckpt.Process{Host: "h", PID: 1, Start: "1"}
	procB := &ckpt.Process{Host: "h", PID: 2, Start: "1"}
	gone := map[int]bool{}
	alive := func(p *ckpt.Process) (bool, bool) { return !gone[p.PID], true }
	var log bytes.Buffer
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now, Log: &log, Alive: alive})
	if err != nil {
		t.Fatal(err)
	}
	beat := func(id string, st ckpt.PresenceState, why string, p *ckpt.Process) {
		t.Helper()
		if err := s.Beat(ctx, id, ckpt.Signal{At: clk.now, State: st, Reason: why, Process: p}); err != nil {
			t.Fatal(err)
		}
	}
	step := func(at time.Duration, want ...string) {
		t.Helper()
		if got := tickAt(t, ctx, m, clk, at); got != strings.Join(want, " ") {
			t.Fatalf("at +%s: transitions %q, want %q", at, got, want)
		}
	}
	step(0)
	clk.now = t0.Add(time.Minute)
	beat("a", ckpt.PresenceBusy, "Bash: make e2e", procA)
	beat("b", ckpt.PresenceWorking, "", procB)
	step(time.Minute) // busy is working: nothing to say
	clk.now = t0.Add(2 * time.Minute)
	beat("b", ckpt.PresenceWaiting, "permission_prompt: Claude needs your permission to use Bash", procB)
	// A beat is not in the change feed: the waiting is seen at the first
	// look after b has been silent since the previous one.
	step(2*time.Minute + 30*time.Second)
	step(3*time.Minute+30*time.Second, "b:working>waiting")
	step(15 * time.Minute) // quiet past the warn threshold (10m), but busy and waiting: nothing
	gone[1] = true
	step(16*time.Minute, "a:working>dead")
	clk.now = t0.Add(17 * time.Minute)
	beat("b", ckpt.PresenceEnded, "session ended (logout)", procB)
	step(17*time.Minute, "b:waiting>ended")
	gone[2] = true
	step(48 * time.Hour) // ended: never stale, never dead
	if !strings.Contains(log.String(), "b (b-agent): working → waiting (permission_prompt: Claude needs your permission to use Bash), silent 1m30s") ||
		!strings.Contains(log.String(), "a (a-agent): working → dead (process 1 on h is gone, last reported busy (Bash: make e2e)), silent 15m0s") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestBusyIsBounded: a tool that never returns ends in stale.
func TestBusyIsBounded(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	clk := &clock{now: t0}
	s.SetClock(clk.Now)
	start(t, s, "a", 5*time.Minute)
	if err := s.Beat(ctx, "a", ckpt.Signal{At: t0, State: ckpt.PresenceBusy, Reason: "Bash: sleep infinity"}); err != nil {
		t.Fatal(err)
	}
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{19 * time.Minute, ""}, {21 * time.Minute, "a:working>stale"}} {
		clk.now = t0.Add(c.at)
		got, err := m.Tick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tr := range got {
			names = append(names, tr.ID+":"+string(tr.From)+">"+string(tr.To))
		}
		if strings.Join(names, " ") != c.want {
			t.Fatalf("at +%s: %v, want %q", c.at, names, c.want)
		}
	}
}
