package ckpt

import (
	"testing"
	"time"
)

func TestPresenceOf(t *testing.T) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	proc := &Process{Host: "h", PID: 42, Start: "7"}
	gone := func(*Process) (bool, bool) { return false, true }
	running := func(*Process) (bool, bool) { return true, true }
	unknown := func(*Process) (bool, bool) { return false, false }
	sum := func(st Status, p *Presence, beat time.Time) *Summary {
		return &Summary{Status: st, UpdatedAt: t0, Heartbeat: Heartbeat{LastBeat: beat, Interval: Duration(15 * time.Minute), Presence: p}}
	}
	rep := func(st PresenceState, why string) *Presence {
		return &Presence{State: st, Since: t0, Reason: why, Process: proc}
	}
	cases := []struct {
		name  string
		s     *Summary
		at    time.Duration // now - t0
		alive AliveFunc
		want  PresenceState
		why   string
	}{
		{"done is not live", sum(StatusDone, rep(PresenceBusy, "Bash"), t0), 0, running, PresenceNone, ""},
		{"pending is not live", sum(StatusPending, nil, time.Time{}), 0, nil, PresenceNone, ""},
		{"ckpt wait is ended", sum(StatusWaiting, nil, time.Time{}), 5 * time.Hour, nil, PresenceEnded, "status waiting"},
		{"no signals, recent", sum(StatusInProgress, nil, time.Time{}), time.Minute, nil, PresenceWorking, ""},
		{"no signals, warn", sum(StatusInProgress, nil, time.Time{}), 31 * time.Minute, nil, PresenceWarn, "silent for more than 30m"},
		{"no signals, stale", sum(StatusBlocked, nil, time.Time{}), 61 * time.Minute, nil, PresenceStale, "silent for more than 1h"},
		{"working", sum(StatusInProgress, rep(PresenceWorking, ""), t0), time.Minute, running, PresenceWorking, ""},
		{"ended never stale", sum(StatusInProgress, rep(PresenceEnded, "logout"), t0), 48 * time.Hour, gone, PresenceEnded, "logout"},
		{"dead at once", sum(StatusInProgress, rep(PresenceWorking, ""), t0), time.Second, gone, PresenceDead, "process 42 on h is gone"},
		{"dead while busy", sum(StatusInProgress, rep(PresenceBusy, "Bash"), t0), time.Second, gone, PresenceDead, "process 42 on h is gone"},
		{"unknown process falls back to the clock", sum(StatusInProgress, rep(PresenceWorking, ""), t0), 31 * time.Minute, unknown, PresenceWarn, "silent for more than 30m"},
		{"busy is not warn", sum(StatusInProgress, rep(PresenceBusy, "Bash"), t0), 45 * time.Minute, running, PresenceBusy, "Bash"},
		{"busy is bounded", sum(StatusInProgress, rep(PresenceBusy, "Bash"), t0), 61 * time.Minute, running, PresenceStale, "silent for more than 1h"},
		{"waiting, process alive", sum(StatusInProgress, rep(PresenceWaiting, "permission_prompt"), t0), 10 * time.Hour, running, PresenceWaiting, "permission_prompt"},
		{"waiting, other host", sum(StatusInProgress, rep(PresenceWaiting, "idle_prompt"), t0), 50 * time.Minute, unknown, PresenceWaiting, "idle_prompt"},
		{"waiting, other host, past stale", sum(StatusInProgress, rep(PresenceWaiting, "idle_prompt"), t0), 61 * time.Minute, unknown, PresenceStale, "silent for more than 1h"},
		{"an update after the last beat overrides waiting", sum(StatusInProgress, rep(PresenceWaiting, "idle_prompt"), t0.Add(-time.Minute)), time.Minute, running, PresenceWorking, ""},
		{"an update after the last beat overrides ended", sum(StatusInProgress, rep(PresenceEnded, "exit"), t0.Add(-time.Minute)), 2 * time.Hour, unknown, PresenceStale, "silent for more than 1h"},
		{"archived", func() *Summary { s := sum(StatusInProgress, nil, t0); s.Archived = &Archive{}; return s }(), 0, nil, PresenceNone, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := PresenceOf(tc.s, t0.Add(tc.at), Thresholds{}, tc.alive)
			if v.State != tc.want || v.Why != tc.why {
				t.Fatalf("PresenceOf = %+v; want %s (%q)", v, tc.want, tc.why)
			}
			if v.Silent != max(tc.at-tc.s.LastSeen().Sub(t0), 0) {
				t.Fatalf("Silent = %v", v.Silent)
			}
		})
	}
}

func TestPresenceSince(t *testing.T) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	s := &Summary{Status: StatusInProgress, UpdatedAt: t0}
	if v := PresenceOf(s, t0.Add(2*time.Hour), Thresholds{Warn: 10 * time.Minute, Stale: 30 * time.Minute}, nil); v.State != PresenceStale || !v.Since.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("stale view = %+v; want stale since t0+30m", v)
	}
	busySince := t0.Add(-time.Hour)
	s.Heartbeat = Heartbeat{LastBeat: t0, Presence: &Presence{State: PresenceBusy, Since: busySince, Reason: "Bash"}}
	if v := PresenceOf(s, t0, Thresholds{}, nil); v.State != PresenceBusy || !v.Since.Equal(busySince) {
		t.Fatalf("busy view = %+v; want busy since %v", v, busySince)
	}
}

func TestPresenceAlarm(t *testing.T) {
	for st, want := range map[PresenceState]Liveness{
		PresenceDead: Stale, PresenceStale: Stale, PresenceWarn: Warn, PresenceNone: NotLive,
		PresenceWorking: Live, PresenceBusy: Live, PresenceWaiting: Live, PresenceEnded: Live,
	} {
		if got := (PresenceView{State: st}).Alarm(); got != want {
			t.Errorf("%s.Alarm() = %s; want %s", st, got, want)
		}
	}
}

func TestSameCode(t *testing.T) {
	a := &CodeState{Root: "/r", Branch: "main", Head: "h1", Uncommitted: 1, Untracked: 2, At: time.Unix(1, 0)}
	b := *a
	b.At, b.Untracked = time.Unix(2, 0), 5
	if !SameCode(a, &b) {
		t.Error("a new time or untracked count is a new place")
	}
	for _, change := range []func(*CodeState){
		func(c *CodeState) { c.Head = "h2" }, func(c *CodeState) { c.Branch = "fix" },
		func(c *CodeState) { c.Uncommitted = 2 }, func(c *CodeState) { c.Root = "/s" }, func(c *CodeState) { c.Ahead = 1 },
	} {
		c := *a
		change(&c)
		if SameCode(a, &c) {
			t.Errorf("%+v is the same place as %+v", c, *a)
		}
	}
	if !SameCode(nil, nil) || SameCode(a, nil) {
		t.Error("nil handling")
	}
}
