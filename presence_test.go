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
		return &Presence{State: st, Since: t0, At: t0, Reason: why, Process: proc, Bound: t0}
	}
	with := func(s *Summary, f func(*Summary)) *Summary { f(s); return s }
	cases := []struct {
		name  string
		s     *Summary
		at    time.Duration // now - t0
		alive AliveFunc
		want  PresenceState
		why   string
		rule  int
	}{
		{"archived", with(sum(StatusInProgress, nil, t0), func(s *Summary) { s.Archived = &Archive{Reason: "crashed"} }), 0, nil, PresenceNone, "archived: crashed", 1},
		{"pending is not live", sum(StatusPending, nil, time.Time{}), 0, nil, PresenceNone, "", 2},
		{"done", sum(StatusDone, rep(PresenceBusy, "Bash"), t0), 0, running, PresenceDone, "", 3},
		{"done, partly", with(sum(StatusDone, nil, t0), func(s *Summary) { s.Partial = true }), 0, running, PresenceDone, "acceptance criteria not all met", 3},
		{"failed says why", with(sum(StatusFailed, nil, t0), func(s *Summary) { s.StatusReason = "tests red" }), 0, nil, PresenceFailed, "tests red", 4},
		{"a beat from 2100 is suspect, never live", sum(StatusInProgress, rep(PresenceWorking, ""), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)), 0, running, PresenceWarn,
			"last seen 2100-01-01T00:00:00Z, ahead of this clock by more than 2m: a clock is wrong; liveness cannot be judged until the agent beats with a sane clock", 5},
		{"blocked shows its blockers, not working", with(sum(StatusBlocked, rep(PresenceWorking, ""), t0), func(s *Summary) { s.Blockers = []string{"b1: need DB creds", "error: disk full"} }),
			time.Minute, running, PresenceBlocked, "b1: need DB creds; error: disk full", 6},
		{"blocked, silent: still blocked", sum(StatusBlocked, nil, time.Time{}), 61 * time.Minute, nil, PresenceBlocked, "status blocked", 6},
		{"ckpt wait --reason waits for a person", with(sum(StatusWaiting, nil, time.Time{}), func(s *Summary) { s.StatusReason = "approve the schema change" }),
			5 * time.Hour, nil, PresenceWaiting, "approve the schema change", 7},
		{"ckpt wait, then the agent ended: still waiting", sum(StatusWaiting, rep(PresenceEnded, "exit"), t0), time.Hour, gone, PresenceWaiting, "ckpt wait", 7},
		{"ckpt wait, then a report of work: working", with(sum(StatusWaiting, rep(PresenceBusy, "Bash"), t0.Add(time.Minute)), func(s *Summary) {
			s.Heartbeat.Presence.At = t0.Add(time.Minute)
		}), 2 * time.Minute, running, PresenceBusy, "Bash", 11},
		{"no signals, recent", sum(StatusInProgress, nil, time.Time{}), time.Minute, nil, PresenceWorking, "", 15},
		{"no signals, warn", sum(StatusInProgress, nil, time.Time{}), 31 * time.Minute, nil, PresenceWarn, "silent for more than 30m", 14},
		{"no signals, stale", sum(StatusInProgress, nil, time.Time{}), 61 * time.Minute, nil, PresenceStale, "silent for more than 1h", 13},
		{"working", sum(StatusInProgress, rep(PresenceWorking, ""), t0), time.Minute, running, PresenceWorking, "", 15},
		{"ended never stale", sum(StatusInProgress, rep(PresenceEnded, "logout"), t0), 48 * time.Hour, gone, PresenceEnded, "logout", 8},
		{"an update after ended keeps ended", sum(StatusInProgress, rep(PresenceEnded, "exit"), t0.Add(-time.Minute)), 2 * time.Hour, gone, PresenceEnded, "exit", 8},
		{"dead at once", sum(StatusInProgress, rep(PresenceWorking, ""), t0), time.Second, gone, PresenceDead, "process 42 on h is gone, last reported working", 10},
		{"dead while busy", sum(StatusInProgress, rep(PresenceBusy, "Bash"), t0), time.Second, gone, PresenceDead, "process 42 on h is gone, last reported busy (Bash)", 10},
		{"dead while a permission prompt waits", sum(StatusInProgress, rep(PresenceWaiting, "permission: Bash"), t0), time.Second, gone, PresenceDead,
			"process 42 on h is gone, last reported waiting (permission: Bash)", 10},
		{"gone after its turn ended: ended (codex exec)", sum(StatusInProgress, rep(PresenceWaiting, ReasonTurnEnded), t0), time.Second, gone, PresenceEnded,
			"process 42 on h exited after its turn (turn ended)", 9},
		{"gone after a failed turn: ended", sum(StatusInProgress, rep(PresenceWaiting, ReasonTurnFailed+": overloaded"), t0), time.Second, gone, PresenceEnded,
			"process 42 on h exited after its turn (turn failed: overloaded)", 9},
		{"unknown process falls back to the clock", sum(StatusInProgress, rep(PresenceWorking, ""), t0), 31 * time.Minute, unknown, PresenceWarn, "silent for more than 30m", 14},
		{"busy is not warn", sum(StatusInProgress, rep(PresenceBusy, "Bash"), t0), 45 * time.Minute, running, PresenceBusy, "Bash", 11},
		{"busy is bounded", sum(StatusInProgress, rep(PresenceBusy, "Bash"), t0), 61 * time.Minute, running, PresenceStale, "silent for more than 1h", 13},
		{"waiting, process alive", sum(StatusInProgress, rep(PresenceWaiting, "permission_prompt"), t0), 10 * time.Hour, running, PresenceWaiting, "permission_prompt", 12},
		{"waiting, other host", sum(StatusInProgress, rep(PresenceWaiting, "idle_prompt"), t0), 50 * time.Minute, unknown, PresenceWaiting, "idle_prompt", 12},
		{"waiting, other host, past stale", sum(StatusInProgress, rep(PresenceWaiting, "idle_prompt"), t0), 61 * time.Minute, unknown, PresenceStale, "silent for more than 1h", 13},
		{"an update after the report clears waiting", with(sum(StatusInProgress, rep(PresenceWaiting, "idle_prompt"), t0.Add(-time.Minute)), func(s *Summary) {
			s.Heartbeat.Presence.At = t0.Add(-time.Minute)
		}), time.Minute, running, PresenceWorking, "", 15},
		{"a takeover drops the old process binding", with(sum(StatusInProgress, rep(PresenceWorking, ""), t0), func(s *Summary) {
			s.SessionStartedAt, s.UpdatedAt = t0.Add(time.Minute), t0.Add(time.Minute)
		}), 2 * time.Minute, gone, PresenceWorking, "", 15},
		{"a resume voids the old session's ended", with(sum(StatusInProgress, rep(PresenceEnded, "exit"), t0), func(s *Summary) {
			s.SessionStartedAt, s.UpdatedAt = t0.Add(time.Minute), t0.Add(time.Minute)
		}), 2 * time.Minute, gone, PresenceWorking, "", 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := PresenceOf(tc.s, t0.Add(tc.at), Thresholds{}, tc.alive)
			if v.State != tc.want || v.Why != tc.why || v.Rule != tc.rule {
				t.Fatalf("PresenceOf = %+v; want %s (%q) by rule %d", v, tc.want, tc.why, tc.rule)
			}
			if r, _ := PresenceRuleOf(v.Rule); r.State != v.State || v.Signal != r.Signal {
				t.Fatalf("rule %d gives %s from %q; the view says %s from %q", v.Rule, r.State, r.Signal, v.State, v.Signal)
			}
		})
	}
}

func TestApplySignalEndedIsMonotonic(t *testing.T) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	p1 := &Process{Host: "h", PID: 42, Start: "7"}
	p2 := &Process{Host: "h", PID: 43, Start: "9"}
	ended := Presence{}.ApplySignal(Signal{State: PresenceEnded, Reason: "session ended (other)", Process: p1, Session: "s1"}, t0)
	for _, tc := range []struct {
		name string
		sig  Signal
		want PresenceState
	}{
		{"StopFailure's late beat, same session", Signal{State: PresenceWaiting, Reason: "turn failed: 529", Process: p1, Session: "s1"}, PresenceEnded},
		{"same process, no session", Signal{State: PresenceWorking, Process: p1}, PresenceEnded},
		{"a new session in the same process (/clear)", Signal{State: PresenceWorking, Process: p1, Session: "s2"}, PresenceWorking},
		{"a resumed session in a new process", Signal{State: PresenceWorking, Process: p2, Session: "s1"}, PresenceWorking},
		{"same session, no process", Signal{State: PresenceWaiting, Session: "s1"}, PresenceEnded},
		{"a new process, no session", Signal{State: PresenceWorking, Process: p2}, PresenceWorking},
		{"a person's beat naming neither", Signal{State: PresenceWorking}, PresenceWorking},
		{"SessionStart of the same process and session (claude --resume)", Signal{State: PresenceWorking, Process: p1, Session: "s1", Begins: true}, PresenceWorking},
	} {
		got := ended.ApplySignal(tc.sig, t0.Add(time.Second))
		if got.State != tc.want {
			t.Errorf("%s: state %s; want %s", tc.name, got.State, tc.want)
		}
		if got.State == PresenceEnded && (got.Reason != "session ended (other)" || !got.At.Equal(t0)) {
			t.Errorf("%s: a refused state changed the record: %+v", tc.name, got)
		}
	}
}

func TestApplySignalRefusesAnOvertakenReport(t *testing.T) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	p1 := &Process{Host: "h", PID: 42, Start: "7"}
	p2 := &Process{Host: "h2", PID: 9, Start: "1"}
	answered := Presence{}.ApplySignal(Signal{At: t0.Add(time.Second), State: PresenceWorking, Process: p1}, t0.Add(time.Second))
	late := Signal{At: t0, State: PresenceWaiting, Reason: "permission_prompt", Process: p1}
	if got := answered.ApplySignal(late, t0.Add(2*time.Second)); got.State != PresenceWorking {
		t.Errorf("the slow Notification of the same process replaced a later report: %+v", got)
	}
	other := late
	other.Process = p2 // another host's clock: no order to compare
	if got := answered.ApplySignal(other, t0.Add(2*time.Second)); got.State != PresenceWaiting {
		t.Errorf("another process's report was refused on its clock: %+v", got)
	}
}

func TestNextBeatForgetsAFutureBeat(t *testing.T) {
	now := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := NextBeat(future, now, now); !got.Equal(now) {
		t.Fatalf("NextBeat after a beat from 2100 = %v; want now", got)
	}
	if got := NextBeat(now.Add(time.Minute), now, now); !got.Equal(now.Add(time.Minute)) {
		t.Fatalf("NextBeat within the skew bound moved back: %v", got)
	}
}

func TestPresenceSince(t *testing.T) {
	t0 := time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
	s := &Summary{Status: StatusInProgress, UpdatedAt: t0}
	if v := PresenceOf(s, t0.Add(2*time.Hour), Thresholds{Warn: 10 * time.Minute, Stale: 30 * time.Minute}, nil); v.State != PresenceStale || !v.Since.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("stale view = %+v; want stale since t0+30m", v)
	}
	busySince := t0.Add(-time.Hour)
	s.Heartbeat = Heartbeat{LastBeat: t0, Presence: &Presence{State: PresenceBusy, Since: busySince, At: t0, Reason: "Bash"}}
	if v := PresenceOf(s, t0, Thresholds{}, nil); v.State != PresenceBusy || !v.Since.Equal(busySince) {
		t.Fatalf("busy view = %+v; want busy since %v", v, busySince)
	}
}

func TestPresenceAlarm(t *testing.T) {
	for st, want := range map[PresenceState]Liveness{
		PresenceDead: Stale, PresenceStale: Stale, PresenceWarn: Warn, PresenceNone: NotLive,
		PresenceWorking: Live, PresenceBusy: Live, PresenceWaiting: Live, PresenceEnded: Live,
		PresenceBlocked: Live, PresenceDone: NotLive, PresenceFailed: NotLive,
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

func TestWaitingForAThingNeedsNobody(t *testing.T) {
	thing := PresenceView{State: PresenceWaiting, For: WaitsThing}
	person := PresenceView{State: PresenceWaiting, For: WaitsPerson}
	if thing.NeedsPerson() || attentionState(&Summary{}, thing) != "" {
		t.Error("waiting for a build is in the inbox")
	}
	if !person.NeedsPerson() || attentionState(&Summary{}, person) != PresenceWaiting {
		t.Error("waiting for a person is not in the inbox")
	}
}
