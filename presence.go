package ckpt

import "time"

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
