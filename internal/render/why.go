package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Why explains a checkpoint's presence (`ckpt why`, GET /v1/why/{id}, MCP
// ckpt_why, the dashboard's checkpoint page): the state, the rule of
// ckpt.PresenceRules and the signal that produced it, when, from which
// host and process, and what would change it.
type Why struct {
	ID       string            `json:"id"`
	Status   ckpt.Status       `json:"status"`
	Presence ckpt.PresenceView `json:"presence"`
	// Rule is the deciding rule: its condition, signal and what changes it.
	Rule     WhyRule   `json:"rule"`
	LastSeen time.Time `json:"last_seen,omitzero"`
	// Reported is the liveness record as the store keeps it (the last
	// reported state, its session and the process bound), before the
	// rules read it for the current session.
	Reported *ckpt.Presence `json:"reported,omitempty"`
	// ProcessIs says what the probe found of the bound process: alive,
	// gone, or unknown (another host, or no probe).
	ProcessIs string `json:"process_is,omitempty"`
	// Session is the checkpoint's current session and when it began.
	Session   string    `json:"session,omitempty"`
	SessionAt time.Time `json:"session_started_at,omitzero"`
	// Warn and Stale are the thresholds the clock rules used.
	Warn  ckpt.Duration `json:"warn_after"`
	Stale ckpt.Duration `json:"stale_after"`
	Now   time.Time     `json:"now"`
}

// WhyRule is a ckpt.PresenceRule as it travels.
type WhyRule struct {
	N      int    `json:"n"`
	When   string `json:"when"`
	Signal string `json:"signal"`
	Change string `json:"change"`
}

// NewWhy explains s's presence at now under th (ckpt.PresenceOf with
// alive, the function every view calls).
func NewWhy(s *ckpt.Summary, now time.Time, th ckpt.Thresholds, alive ckpt.AliveFunc) Why {
	v := ckpt.PresenceOf(s, now, th, alive)
	r, _ := ckpt.PresenceRuleOf(v.Rule)
	w := Why{ID: s.ID, Status: s.Status, Presence: v, LastSeen: s.LastSeen(), Now: now,
		Rule:    WhyRule{N: r.N, When: r.When, Signal: r.Signal, Change: r.Change},
		Session: s.SessionID, SessionAt: s.SessionStartedAt}
	warn, stale := th.ForInterval(s.Heartbeat.Interval.D())
	w.Warn, w.Stale = ckpt.Duration(warn), ckpt.Duration(stale)
	if p := s.Heartbeat.Presence; p != nil {
		cp := *p
		w.Reported = &cp
		if p.Process != nil {
			w.ProcessIs = "unknown (another host, or no start time to tell a reused PID)"
			if alive != nil {
				switch ok, known := alive(p.Process); {
				case known && ok:
					w.ProcessIs = "alive"
				case known:
					w.ProcessIs = "gone"
				}
			}
		}
	}
	return w
}

// WhyText writes w for people: the state line, then labelled rows.
func WhyText(out io.Writer, w Why) error {
	var tw strings.Builder
	v := w.Presence
	head := w.ID + ": " + string(v.State)
	if v.State == ckpt.PresenceWaiting && v.For != "" {
		head += " for a " + v.For
	}
	if !v.Since.IsZero() {
		head += " since " + v.Since.Format(TimeLayout)
		if !v.Since.After(w.Now) {
			head += " (" + Ago(v.Since, w.Now) + ")"
		}
	}
	fmt.Fprintln(&tw, head)
	row := func(label, text string) {
		if text != "" {
			fmt.Fprintf(&tw, "  %-10s %s\n", label, text)
		}
	}
	if len(v.Blockers) == 0 {
		row("why", v.Why)
	}
	for _, b := range v.Blockers {
		row("blocker", b)
	}
	row("rule", fmt.Sprintf("%d: %s", w.Rule.N, w.Rule.When))
	row("signal", w.Rule.Signal)
	row("status", string(w.Status))
	if !w.LastSeen.IsZero() {
		seen := w.LastSeen.Format(TimeLayout)
		if v.Suspect {
			seen += " (ahead of this clock: suspect)"
		} else {
			seen += " (" + Ago(w.LastSeen, w.Now) + ")"
		}
		row("last seen", seen)
	}
	if p := w.Reported; p != nil {
		row("reported", ReportedText(p))
		if p.Process != nil {
			proc := p.Process.String()
			if p.Process.Start != "" {
				proc += " (start " + p.Process.Start + ")"
			}
			row("process", proc+": "+w.ProcessIs)
		}
	}
	if w.Session != "" || !w.SessionAt.IsZero() {
		s := orDash(w.Session)
		if !w.SessionAt.IsZero() {
			s += " since " + w.SessionAt.Format(TimeLayout)
		}
		row("session", s)
	}
	row("clock", "warn after "+w.Warn.D().String()+" of silence, stale after "+w.Stale.D().String())
	row("changes", w.Rule.Change)
	_, err := io.WriteString(out, Terminal(tw.String()))
	return err
}

// ReportedText is the stored presence record in one line: `busy "Bash: go test" at T by session s1`.
func ReportedText(p *ckpt.Presence) string {
	var b strings.Builder
	b.WriteString(orDash(string(p.State)))
	if p.Reason != "" {
		fmt.Fprintf(&b, " %q", p.Reason)
	}
	if p.For != "" {
		b.WriteString(" for a " + p.For)
	}
	if !p.At.IsZero() {
		b.WriteString(" at " + p.At.Format(TimeLayout))
	}
	if p.Session != "" {
		b.WriteString(" by session " + p.Session)
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
