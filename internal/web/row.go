package web

import (
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
)

// Row is one checkpoint as the overview shows it: its summary, the
// presence word (bulk.Word: ckpt.PresenceOf's working, busy, waiting,
// blocked, failed, ended, dead, warn, stale, done; for "-", its status:
// pending, abandoned, or archived) with since when and why, and when it
// was last seen.
type Row struct {
	ckpt.Summary
	Presence string    `json:"presence"`
	Since    time.Time `json:"presence_since,omitzero"`
	Why      string    `json:"presence_why,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

func (h *Handler) rowOf(s *ckpt.Summary, now time.Time) Row {
	r := Row{Summary: *s, LastSeen: s.LastSeen()}
	r.Presence, r.Since, r.Why = bulk.Word(s, now, h.opts.Thresholds, h.opts.Alive)
	return r
}
