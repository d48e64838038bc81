package web

import (
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Row is one checkpoint as the overview shows it: its summary, the
// presence word (ckpt.PresenceOf: working, busy, waiting, blocked, failed,
// ended, dead, warn, stale, done; for "-", its status: pending, abandoned,
// or archived) with since when and why, and when it was last seen.
type Row struct {
	ckpt.Summary
	Presence string    `json:"presence"`
	Since    time.Time `json:"presence_since,omitzero"`
	Why      string    `json:"presence_why,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

func (h *Handler) rowOf(s *ckpt.Summary, now time.Time) Row {
	r := Row{Summary: *s, LastSeen: s.LastSeen()}
	v := ckpt.PresenceOf(s, now, h.opts.Thresholds, h.opts.Alive)
	r.Presence, r.Since, r.Why = string(v.State), v.Since, v.Why
	if st := ckpt.StateOf(s, now, h.opts.Thresholds, h.opts.Alive); (st == "blocked" || st == "waiting") && string(st) != r.Presence {
		// Work blocked or waiting on a person says so (the state the inbox
		// and the webhooks read), not "working".
		r.Presence, r.Since, r.Why = string(st), s.UpdatedAt, ""
	}
	if v.State == ckpt.PresenceNone && r.Presence == string(v.State) {
		// Work that is not live shows what became of it instead.
		r.Presence, r.Since = string(s.Status), s.UpdatedAt
		if s.Archived != nil {
			r.Presence, r.Since, r.Why = "archived", s.Archived.At, s.Archived.Reason
		}
	}
	return r
}
