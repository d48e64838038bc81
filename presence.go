package ckpt

import (
	"strconv"
	"strings"
	"time"
)

// PresenceState is what an agent's client last said it is doing. It is
// liveness, not history: recorded by Beat, no fsync, no event.
type PresenceState string

// Presence states a client reports. The presence a view shows (working,
// busy, waiting, ended, dead, warn, stale) is derived from these, the
// checkpoint's status and the clocks; see docs/design.md.
const (
	PresenceWorking PresenceState = "working" // active: a prompt, a tool finished
	PresenceBusy    PresenceState = "busy"    // inside a tool call or a subagent
	PresenceWaiting PresenceState = "waiting" // waiting for a person
	PresenceEnded   PresenceState = "ended"   // the session closed cleanly
)

// Valid reports whether p is one of the reported states.
func (p PresenceState) Valid() bool {
	switch p {
	case PresenceWorking, PresenceBusy, PresenceWaiting, PresenceEnded:
		return true
	}
	return false
}

// Process identifies an agent client's process on a host. Start is the
// process's start time as the host reports it (on Linux, the starttime
// field of /proc/PID/stat), so a reused PID is not mistaken for the agent.
type Process struct {
	Host  string `json:"host"`
	PID   int    `json:"pid"`
	Start string `json:"start,omitempty"`
}

// Signal is one sign of life given to Store.Beat. A zero Signal is a plain
// beat at the store's now.
type Signal struct {
	At      time.Time     // when; zero means the store's now (clamped, see NextBeat)
	State   PresenceState // "" leaves the recorded state as it was
	Reason  string        // why: the tool, the prompt waited on; kept with State
	Process *Process      // the agent client's process, when known; nil keeps it
}

// Presence is the liveness record's last reported state, as a store keeps
// it: State and Reason from the last Signal that carried a State, Since the
// time State last changed, Process from the last Signal that carried one.
type Presence struct {
	State   PresenceState `json:"state,omitempty"`
	Since   time.Time     `json:"since,omitzero"`
	Reason  string        `json:"reason,omitempty"`
	Process *Process      `json:"process,omitempty"`
}

// ApplySignal returns the presence a store keeps after sig, received at the
// (already clamped) time at. Every backend uses it, so all keep the same.
func (p Presence) ApplySignal(sig Signal, at time.Time) Presence {
	if sig.State != "" {
		if sig.State != p.State || p.Since.IsZero() {
			p.Since = at
		}
		p.State, p.Reason = sig.State, sig.Reason
	}
	if sig.Process != nil {
		pr := *sig.Process
		p.Process = &pr
	}
	return p
}

// IsZero reports whether nothing was ever reported.
func (p Presence) IsZero() bool { return p.State == "" && p.Process == nil }

// Presence states a view shows besides the reported ones. They are derived
// (PresenceOf), never reported: Valid is false for them.
const (
	PresenceDead  PresenceState = "dead"  // the agent's process is known gone
	PresenceWarn  PresenceState = "warn"  // silent past the warn threshold
	PresenceStale PresenceState = "stale" // silent past the stale threshold
	PresenceNone  PresenceState = "-"     // not live: pending, finished or archived
)

// PresenceView is a checkpoint's presence as every view shows it.
type PresenceView struct {
	State PresenceState `json:"state"`
	// Since is when State began, as far as ckpt knows; zero when unknown.
	Since time.Time `json:"since,omitzero"`
	// Why says what the agent waits on or runs, why it is taken for dead,
	// or which threshold it passed.
	Why string `json:"why,omitempty"`
	// Silent is how long since the checkpoint was last seen.
	Silent time.Duration `json:"-"`
}

// Alarm maps the view onto the old three liveness levels for alerting:
// dead and stale are Stale, warn is Warn, a not-live checkpoint is NotLive,
// everything else (working, busy, waiting, ended) is Live. `ckpt stale`
// exits 10 or 11 on it.
func (v PresenceView) Alarm() Liveness {
	switch v.State {
	case PresenceDead, PresenceStale:
		return Stale
	case PresenceWarn:
		return Warn
	case PresenceNone:
		return NotLive
	}
	return Live
}

// AliveFunc reports whether p is alive. known is false when the caller
// cannot tell (another host, no start time to rule out a reused PID):
// presence then falls back to the clock.
type AliveFunc func(p *Process) (alive, known bool)

// PresenceOf derives the presence of the summarised checkpoint at now.
// alive may be nil (nothing can be confirmed dead). The rules, first match
// wins, with age = now − LastSeen and warn/stale from t (docs/design.md,
// "Presence"):
//
//  1. not live (pending, done, failed, abandoned) or archived: "-";
//  2. status waiting (`ckpt wait`): ended;
//  3. a reported state that a later update overrides (UpdatedAt after
//     the last beat: the agent acted since it last said what it does)
//     counts as working, below;
//  4. reported ended: ended (SessionEnd), never stale;
//  5. the recorded process is known gone (or its PID now belongs to
//     another process): dead;
//  6. reported busy: busy while age ≤ stale, then stale (a tool that
//     never returns ends in stale; busy is never warn);
//  7. reported waiting: waiting while the process is known alive or
//     age ≤ stale, then stale;
//  8. otherwise: stale past stale, warn past warn, else working.
func PresenceOf(s *Summary, now time.Time, t Thresholds, alive AliveFunc) PresenceView {
	seen := s.LastSeen()
	age := max(now.Sub(seen), 0)
	v := PresenceView{Silent: age}
	if !s.Status.Live() || s.Archived != nil {
		v.State = PresenceNone
		return v
	}
	if s.Status == StatusWaiting {
		v.State, v.Since, v.Why = PresenceEnded, s.UpdatedAt, "status waiting"
		return v
	}
	var p Presence
	if s.Heartbeat.Presence != nil {
		p = *s.Heartbeat.Presence
	}
	if s.UpdatedAt.After(s.Heartbeat.LastBeat) {
		p.State, p.Reason, p.Since = "", "", time.Time{}
	}
	if p.State == PresenceEnded {
		v.State, v.Since, v.Why = PresenceEnded, p.Since, p.Reason
		return v
	}
	known, isAlive := false, false
	if p.Process != nil && alive != nil {
		isAlive, known = alive(p.Process)
		if known && !isAlive {
			v.State, v.Since = PresenceDead, seen
			v.Why = "process " + p.Process.String() + " is gone"
			return v
		}
	}
	warn, stale := t.ForInterval(s.Heartbeat.Interval.D())
	switch {
	case p.State == PresenceBusy && age <= stale,
		p.State == PresenceWaiting && (age <= stale || known && isAlive):
		v.State, v.Since, v.Why = p.State, p.Since, p.Reason
	case age > stale:
		v.State, v.Since, v.Why = PresenceStale, seen.Add(stale), "silent for more than "+shortDuration(stale)
	case age > warn:
		v.State, v.Since, v.Why = PresenceWarn, seen.Add(warn), "silent for more than "+shortDuration(warn)
	default:
		v.State = PresenceWorking
		if p.State == PresenceWorking {
			v.Since, v.Why = p.Since, p.Reason
		}
	}
	return v
}

// String names the process as "PID on HOST".
func (p *Process) String() string {
	if p.Host == "" {
		return strconv.Itoa(p.PID)
	}
	return strconv.Itoa(p.PID) + " on " + p.Host
}

// shortDuration writes d as 30m or 1h30m rather than 30m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
