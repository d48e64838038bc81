package ckpt

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// The states a view shows besides the reported ones (working, busy,
// waiting, ended). They are derived (PresenceOf), never reported: Valid is
// false for them.
const (
	PresenceBlocked PresenceState = "blocked" // status blocked: a blocker or a blocking error stops it
	PresenceFailed  PresenceState = "failed"  // status failed
	PresenceDone    PresenceState = "done"    // status done
	PresenceDead    PresenceState = "dead"    // the agent's process is known gone mid-work
	PresenceWarn    PresenceState = "warn"    // silent past the warn threshold, or a suspect clock
	PresenceStale   PresenceState = "stale"   // silent past the stale threshold
	PresenceNone    PresenceState = "-"       // not live: pending, abandoned or archived
)

// ViewStates lists every state PresenceOf returns, in the order a fleet
// view groups them (what needs a person first).
var ViewStates = []PresenceState{PresenceWaiting, PresenceBlocked, PresenceFailed, PresenceDead,
	PresenceStale, PresenceWarn, PresenceBusy, PresenceWorking, PresenceEnded, PresenceDone, PresenceNone}

// Turn reasons: the reason a client's Stop (the turn ended) and
// StopFailure (the turn failed) report with waiting. A process that is
// gone after one of them ended cleanly between turns (rule 9): Codex has
// no SessionEnd, and `codex exec` exits right after its last Stop.
const (
	ReasonTurnEnded  = "turn ended"
	ReasonTurnFailed = "turn failed"
)

// PresenceView is a checkpoint's presence as every view shows it: the
// state, and what produced it (the rule of PresenceRules and its signal).
type PresenceView struct {
	State PresenceState `json:"state"`
	// Since is when State began, as far as ckpt knows; zero when unknown.
	Since time.Time `json:"since,omitzero"`
	// Why says what the agent waits on or runs, why it is taken for dead,
	// which threshold it passed, or what blocks it.
	Why string `json:"why,omitempty"`
	// For says what a waiting checkpoint waits on: WaitsPerson or WaitsThing.
	For string `json:"for,omitempty"`
	// Blockers are a blocked checkpoint's active blockers and blocking
	// errors, as text.
	Blockers []string `json:"blockers,omitempty"`
	// Rule is the number of the PresenceRules entry that decided State.
	Rule int `json:"rule,omitempty"`
	// Signal names where the deciding fact came from (Rule's Signal).
	Signal string `json:"signal,omitempty"`
	// Process is the agent client's process the rule judged, when one is
	// bound to the current session.
	Process *Process `json:"process,omitempty"`
	// Suspect marks a last-seen time ahead of the reader's clock by more
	// than MaxClockSkew: shown, never taken for life.
	Suspect bool `json:"suspect,omitempty"`
	// Silent is how long since the checkpoint was last seen.
	Silent time.Duration `json:"-"`
}

// Alarm maps the view onto the three liveness levels for alerting: dead
// and stale are Stale, warn is Warn, done, failed and "-" are NotLive,
// everything else (working, busy, waiting, blocked, ended) is Live. `ckpt
// stale` exits 10 or 11 on it.
func (v PresenceView) Alarm() Liveness {
	switch v.State {
	case PresenceDead, PresenceStale:
		return Stale
	case PresenceWarn:
		return Warn
	case PresenceNone, PresenceDone, PresenceFailed:
		return NotLive
	}
	return Live
}

// NeedsPerson reports whether the state asks an operator to act: waiting
// for a person, blocked, failed, dead or stale.
func (v PresenceView) NeedsPerson() bool {
	switch v.State {
	case PresenceWaiting:
		return v.For != WaitsThing
	case PresenceBlocked, PresenceFailed, PresenceDead, PresenceStale:
		return true
	}
	return false
}

// AliveFunc reports whether p is alive. known is false when the caller
// cannot tell (another host, no start time to rule out a reused PID):
// presence then falls back to the clock.
type AliveFunc func(p *Process) (alive, known bool)

// PresenceOf derives the presence of the summarised checkpoint at now, by
// the first of PresenceRules that matches (docs/design.md, "Presence").
// alive may be nil (nothing can be confirmed dead). Every view, the
// monitor, webhooks and mirrors call it, so they all show the same state.
func PresenceOf(s *Summary, now time.Time, t Thresholds, alive AliveFunc) PresenceView {
	seen := s.LastSeen()
	v := PresenceView{Silent: max(now.Sub(seen), 0)}
	if v, ok := statusPresence(s, v); ok {
		return v
	}
	if seen.Sub(now) > MaxClockSkew {
		v.Silent = 0
		v = v.set(5, PresenceWarn, seen, "last seen "+seen.UTC().Format(time.RFC3339)+", ahead of this clock by more than "+
			shortDuration(MaxClockSkew)+": a clock is wrong; liveness cannot be judged until the agent beats with a sane clock")
		v.Suspect = true
		return v
	}
	p := reported(s)
	switch {
	case s.Status == StatusBlocked || s.ActiveBlockers > 0 || s.BlockingErrors > 0:
		v = v.set(6, PresenceBlocked, s.UpdatedAt, blockedWhy(s))
		v.Blockers = append([]string(nil), s.Blockers...)
		return v
	case s.Status == StatusWaiting && !resumedWork(s, p):
		v = v.set(7, PresenceWaiting, s.UpdatedAt, orString(s.StatusReason, "ckpt wait"))
		v.For = WaitsPerson
		return v
	case p.State == PresenceEnded:
		return v.set(8, PresenceEnded, p.Since, p.Reason)
	}
	return v.fromReport(s, p, now, t, alive)
}

// RejudgeDead judges again, on a fresh read, a checkpoint that a view
// judged dead (v); any other verdict is returned as it is. A view reads
// the store, then probes the process: a session that ended cleanly in
// between (its SessionEnd landed after the read, its process exited before
// the probe) would read dead for that one look. A record read after the
// probe found the process gone holds every signal the process sent. Views
// that act on dead (the stale report, the monitor and its webhooks, the
// inbox) confirm it so; v is kept when the checkpoint cannot be read.
func RejudgeDead(ctx context.Context, st Store, id string, v PresenceView, now time.Time, t Thresholds, alive AliveFunc) PresenceView {
	if v.State != PresenceDead || st == nil {
		return v
	}
	c, err := st.Get(ctx, id, 0)
	if err != nil {
		return v
	}
	s := c.Summary()
	return PresenceOf(&s, now, t, alive)
}

// RereadDead puts in place of each checkpoint of list that reads dead at
// now (PresenceOf under t and alive) the record read again from st, for
// the one-off views (ckpt status, show) that RejudgeDead explains. A
// checkpoint that cannot be read again is kept as it was.
func RereadDead(ctx context.Context, st Store, list []*Checkpoint, now time.Time, t Thresholds, alive AliveFunc) {
	for i, c := range list {
		s := c.Summary()
		if PresenceOf(&s, now, t, alive).State != PresenceDead {
			continue
		}
		if fresh, err := st.Get(ctx, c.ID, 0); err == nil {
			list[i] = fresh
		}
	}
}

// RereadDeadSummaries is RereadDead for a list of summaries.
func RereadDeadSummaries(ctx context.Context, st Store, list []Summary, now time.Time, t Thresholds, alive AliveFunc) {
	for i := range list {
		if PresenceOf(&list[i], now, t, alive).State != PresenceDead {
			continue
		}
		if fresh, err := st.Get(ctx, list[i].ID, 0); err == nil {
			list[i] = fresh.Summary()
		}
	}
}

// set fills the view's state, when it began, why, and the rule's number
// and signal.
func (v PresenceView) set(rule int, st PresenceState, since time.Time, why string) PresenceView {
	v.State, v.Since, v.Why, v.Rule, v.Signal = st, since, why, rule, PresenceRules[rule-1].Signal
	return v
}

// statusPresence applies the rules the status alone decides (1–4).
func statusPresence(s *Summary, v PresenceView) (PresenceView, bool) {
	switch {
	case s.Archived != nil:
		return v.set(1, PresenceNone, s.Archived.At, strings.TrimSuffix("archived: "+s.Archived.Reason, ": ")), true
	case s.Status == StatusPending || s.Status == StatusAbandoned || !s.Status.Live() && !s.Status.Final():
		return v.set(2, PresenceNone, s.UpdatedAt, s.StatusReason), true
	case s.Status == StatusDone:
		why := ""
		if s.Partial {
			why = "acceptance criteria not all met"
		}
		return v.set(3, PresenceDone, completedAt(s), why), true
	case s.Status == StatusFailed:
		return v.set(4, PresenceFailed, completedAt(s), orString(s.StatusReason, "failed")), true
	}
	return v, false
}

// reported is the presence record as it stands for the current session.
// The process binding is void when it was made before the session began
// (a takeover, restart or resume drops the old process), and so is a state
// reported before it, ended included. A state other than ended is void
// when an update is later than its report (the agent acted since it said
// what it does: the next sign of work clears waiting).
func reported(s *Summary) Presence {
	var p Presence
	if s.Heartbeat.Presence != nil {
		p = *s.Heartbeat.Presence
	}
	at := p.reportedAt(s.Heartbeat.LastBeat)
	if start := s.SessionStartedAt; !start.IsZero() {
		if p.Process != nil && p.Bound.Before(start) {
			p.Process = nil
		}
		if p.State != "" && at.Before(start) {
			p.State = ""
		}
	}
	if p.State != PresenceEnded && s.UpdatedAt.After(at) {
		p.State = ""
	}
	if p.State == "" {
		p.Reason, p.For, p.Since, p.At = "", "", time.Time{}, time.Time{}
	}
	return p
}

// reportedAt is when p's state was last reported: At, or for a record
// written before At was kept, the last beat.
func (p Presence) reportedAt(lastBeat time.Time) time.Time {
	if !p.At.IsZero() {
		return p.At
	}
	return lastBeat
}

// resumedWork reports whether p reports work (working, busy) made after
// the status changed to waiting: the answer came, waiting is over.
func resumedWork(s *Summary, p Presence) bool {
	return (p.State == PresenceWorking || p.State == PresenceBusy) && p.At.After(s.UpdatedAt)
}

// fromReport applies the rules of the report, the process and the clock
// (9–15).
func (v PresenceView) fromReport(s *Summary, p Presence, now time.Time, t Thresholds, alive AliveFunc) PresenceView {
	seen := s.LastSeen()
	age := v.Silent
	known, isAlive := false, false
	if p.Process != nil {
		v.Process = p.Process
		if alive != nil {
			isAlive, known = alive(p.Process)
		}
	}
	if known && !isAlive {
		if p.TurnOver() {
			return v.set(9, PresenceEnded, seen, "process "+p.Process.String()+" exited after its turn ("+p.Reason+")")
		}
		return v.set(10, PresenceDead, seen, "process "+p.Process.String()+" is gone"+lastReport(p))
	}
	warn, stale := t.ForInterval(s.Heartbeat.Interval.D())
	switch {
	case p.State == PresenceBusy && age <= stale:
		return v.set(11, PresenceBusy, p.Since, p.Reason)
	case p.State == PresenceWaiting && (age <= stale || known && isAlive):
		v = v.set(12, PresenceWaiting, p.Since, p.Reason)
		v.For = orString(p.For, WaitsPerson)
		return v
	case age > stale:
		return v.set(13, PresenceStale, seen.Add(stale), "silent for more than "+shortDuration(stale))
	case age > warn:
		return v.set(14, PresenceWarn, seen.Add(warn), "silent for more than "+shortDuration(warn))
	}
	v = v.set(15, PresenceWorking, time.Time{}, "")
	if p.State == PresenceWorking {
		v.Since, v.Why = p.Since, p.Reason
	}
	return v
}

// TurnOver reports whether p says the client finished a turn (Stop or
// StopFailure) and waits for its next prompt.
func (p Presence) TurnOver() bool {
	return p.State == PresenceWaiting && (p.Reason == ReasonTurnEnded || strings.HasPrefix(p.Reason, ReasonTurnFailed))
}

// lastReport is ", last reported busy (Bash: go test)" for a dead view.
func lastReport(p Presence) string {
	if p.State == "" {
		return ""
	}
	s := ", last reported " + string(p.State)
	if p.Reason != "" {
		s += " (" + p.Reason + ")"
	}
	return s
}

// blockedWhy is "b1: TEXT; error: MESSAGE", or the counts a summary
// without the texts (an older index) has.
func blockedWhy(s *Summary) string {
	if len(s.Blockers) > 0 {
		return strings.Join(s.Blockers, "; ")
	}
	n := s.ActiveBlockers + s.BlockingErrors
	if n == 0 {
		return "status blocked"
	}
	return "blocked by " + strconv.Itoa(n) + " blocker(s)"
}

func completedAt(s *Summary) time.Time {
	if s.CompletedAt != nil {
		return *s.CompletedAt
	}
	return s.UpdatedAt
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
