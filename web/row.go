package web

import (
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Row is one checkpoint as the overview shows it: its summary, the
// presence word (working, busy, waiting, ended, dead, warn, stale; for work
// that is not live, its status: pending, done, failed, abandoned) with
// since when and why, and when it was last seen.
type Row struct {
	ckpt.Summary
	Presence string    `json:"presence"`
	Since    time.Time `json:"presence_since,omitzero"`
	Why      string    `json:"presence_why,omitempty"`
	LastSeen time.Time `json:"last_seen"`
}

func (h *Handler) rowOf(s *ckpt.Summary, now time.Time) Row {
	r := Row{Summary: *s, LastSeen: s.LastSeen()}
	r.Presence, r.Since, r.Why = presence(s, now, h.opts.Thresholds)
	return r
}

// presence names what the overview shows for s.
func presence(s *ckpt.Summary, now time.Time, th ckpt.Thresholds) (word string, since time.Time, why string) {
	lv, _ := s.Liveness(now, th)
	switch {
	case s.Archived != nil:
		return "archived", s.Archived.At, s.Archived.Reason
	case lv == ckpt.NotLive:
		return string(s.Status), s.UpdatedAt, ""
	case lv == ckpt.Stale || lv == ckpt.Warn:
		return string(lv), s.LastSeen(), ""
	}
	if p := s.Heartbeat.Presence; p != nil && p.State != "" && !p.Since.Before(s.UpdatedAt) {
		return string(p.State), p.Since, p.Reason
	}
	return string(ckpt.PresenceWorking), s.LastSeen(), ""
}
