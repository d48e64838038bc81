package ckpt

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestQuietOmitsOnlyWhatThePresenceCountsAsLive: whatever the summary and
// the presence record hold, a checkpoint Quiet.Omits (judged on its
// status, archived flag, last seen time, interval and whether a process
// is bound) is one PresenceOf judges live and not silent, whatever the
// process check says; and a checkpoint seen just now with nothing else
// wrong is omitted (so the hint is not empty).
func TestQuietOmitsOnlyWhatThePresenceCountsAsLive(t *testing.T) {
	now := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(n int) int { return rng.IntN(n) }
	statuses := []Status{StatusPending, StatusInProgress, StatusWaiting, StatusBlocked, StatusDone, StatusFailed, StatusAbandoned, "odd"}
	states := []PresenceState{"", PresenceWorking, PresenceBusy, PresenceWaiting, PresenceEnded}
	ages := []time.Duration{-time.Hour, -3 * time.Minute, -time.Minute, 0, time.Minute, 29 * time.Minute, 30 * time.Minute,
		30*time.Minute + 1, 59 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour}
	intervals := []time.Duration{0, time.Minute, 15 * time.Minute, time.Hour}
	thresholds := []Thresholds{{}, {Warn: 10 * time.Minute}, {Stale: 5 * time.Minute}, {Warn: time.Hour, Stale: 20 * time.Minute}}
	omitted := 0
	for range 20000 {
		s := Summary{ID: "a/b", Status: statuses[pick(len(statuses))], UpdatedAt: now.Add(-ages[pick(len(ages))])}
		s.Heartbeat.Interval = Duration(intervals[pick(len(intervals))])
		if pick(2) == 0 {
			s.Heartbeat.LastBeat = now.Add(-ages[pick(len(ages))])
		}
		if pick(6) == 0 {
			s.Archived = &Archive{Reason: "complete", At: now}
		}
		if pick(6) == 0 {
			s.ActiveBlockers = 1
		}
		if pick(4) == 0 {
			s.SessionStartedAt = now.Add(-ages[pick(len(ages))])
		}
		var p Presence
		if st := states[pick(len(states))]; st != "" {
			p = Presence{State: st, Since: now.Add(-ages[pick(len(ages))]), At: now.Add(-ages[pick(len(ages))]), Reason: ReasonTurnEnded}
		}
		if pick(3) == 0 {
			p.Process = &Process{Host: "h", PID: 7}
			p.Bound = now.Add(-ages[pick(len(ages))])
		}
		if !p.IsZero() {
			s.Heartbeat.Presence = &p
		}
		th := thresholds[pick(len(thresholds))]
		q := &Quiet{At: now, Thresholds: th}
		if !q.Omits(s.Status, s.Archived != nil, s.LastSeen(), s.Heartbeat.Interval.D(), p.Process != nil) {
			continue
		}
		omitted++
		for _, alive := range []AliveFunc{nil, func(*Process) (bool, bool) { return false, true }, func(*Process) (bool, bool) { return true, true }} {
			if v := PresenceOf(&s, now, th, alive); v.Alarm() != Live {
				t.Fatalf("Omits %+v (presence %+v) under %+v, but PresenceOf judges it %s (%s)", s, p, th, v.State, v.Why)
			}
		}
	}
	if omitted == 0 {
		t.Fatal("Omits left out nothing")
	}
	q := &Quiet{At: now}
	if !q.Omits(StatusInProgress, false, now.Add(-time.Minute), 0, false) {
		t.Error("a checkpoint seen a minute ago is not omitted")
	}
	if q.Omits(StatusInProgress, false, now.Add(-time.Minute), 0, true) || (*Quiet)(nil).Omits(StatusInProgress, false, now, 0, false) {
		t.Error("a bound process, or no hint, still omits")
	}
}
