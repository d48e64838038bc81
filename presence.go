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
	At     time.Time     // when; zero means the store's now (clamped, see NextBeat)
	State  PresenceState // "" leaves the recorded state as it was
	Reason string        // why: the tool, the prompt waited on; kept with State
	// For says what a waiting state waits on: WaitsPerson (the default) or
	// WaitsThing (a build, a review bot, a lock); kept with State.
	For     string
	Process *Process // the agent client's process, when known; nil keeps it
	// Session is the client session that reports, when known ("" keeps
	// it). With Process it tells a late signal of a session that ended
	// from a new session (ApplySignal).
	Session string
	// Begins marks the signal that starts a client's life (SessionStart,
	// a resume included): it replaces ended whatever process and session
	// it names.
	Begins bool
}

// What a waiting state waits on (Signal.For, PresenceView.For).
const (
	WaitsPerson = "person"
	WaitsThing  = "thing"
)

// Presence is the liveness record's last reported state, as a store keeps
// it: State, Reason and For from the last Signal that carried a State
// (see ApplySignal for the one it refuses), Since the time State last
// changed, At the time it was last reported, Process and Session from the last Signal that carried them,
// Bound the time Process was last reported.
type Presence struct {
	State   PresenceState `json:"state,omitempty"`
	Since   time.Time     `json:"since,omitzero"`
	Reason  string        `json:"reason,omitempty"`
	For     string        `json:"for,omitempty"`
	At      time.Time     `json:"at,omitzero"`
	Process *Process      `json:"process,omitempty"`
	Bound   time.Time     `json:"bound,omitzero"`
	Session string        `json:"session,omitempty"`
}

// ApplySignal returns the presence a store keeps after sig, received at the
// (already clamped) time at. Every backend uses it, so all keep the same.
//
// Ended is monotonic within a session's life: a state other than ended
// from the process and session that reported ended is refused (the State,
// Reason and For stay; the time still counts as a beat). Claude Code starts
// StopFailure and SessionEnd together on an API error and waits for
// neither, so StopFailure's "waiting" may land after "ended". A signal from
// another process (a resumed session) or another session (/clear's new
// session in the same process) replaces ended; so does one that names
// neither (a person's `ckpt beat --state working`), and so does a signal
// that Begins a life (SessionStart). A state the same process reported
// before the recorded one (a slow hook overtaken by a later one) is
// refused too: a signal never moves the record back.
func (p Presence) ApplySignal(sig Signal, at time.Time) Presence {
	if sig.State != "" && !p.keepsEnded(sig) && !p.newerThan(sig) {
		if sig.State != p.State || p.Since.IsZero() {
			p.Since = at
		}
		p.State, p.Reason, p.For, p.At = sig.State, sig.Reason, "", at
		if sig.State == PresenceWaiting && sig.For != WaitsPerson {
			p.For = sig.For
		}
	}
	if sig.Process != nil {
		pr := *sig.Process
		p.Process, p.Bound = &pr, at
	}
	if sig.Session != "" {
		p.Session = sig.Session
	}
	return p
}

// newerThan reports whether p's state was reported after sig's by the
// same process (one clock): sig is a slow hook's, overtaken by a later one
// (a permission Notification landing after the PostToolUse of the answer).
func (p Presence) newerThan(sig Signal) bool {
	return !sig.At.IsZero() && sig.At.Before(p.At) && sig.Process != nil && p.Process.Same(sig.Process)
}

// keepsEnded reports whether p, ended, refuses sig's state: sig comes from
// the process and the session that reported ended, as far as both sides
// tell (a new process, or a new session in the same process, is a new
// life).
func (p Presence) keepsEnded(sig Signal) bool {
	if p.State != PresenceEnded || sig.State == PresenceEnded || sig.Begins {
		return false
	}
	sameSession := sig.Session != "" && p.Session != "" && sig.Session == p.Session
	otherSession := sig.Session != "" && p.Session != "" && sig.Session != p.Session
	if sig.Process != nil && p.Process != nil {
		return p.Process.Same(sig.Process) && !otherSession
	}
	return sameSession
}

// Same reports whether p and q are one process: same host, PID and start
// time (a start time one side does not know does not tell them apart).
func (p *Process) Same(q *Process) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.Host == q.Host && p.PID == q.PID && (p.Start == "" || q.Start == "" || p.Start == q.Start)
}

// IsZero reports whether nothing was ever reported.
func (p Presence) IsZero() bool { return p.State == "" && p.Process == nil && p.Session == "" }

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
