package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/render"
)

// timeLayout is how times are printed: RFC 3339, UTC, to the second.
const timeLayout = time.RFC3339

// summaryLine is the one line a write prints, e.g.
//
//	kai-7/secondary-a  rev 4  step research done  (1/3, 33%, in_progress)
func summaryLine(c *ckpt.Checkpoint, e ckpt.Event) string {
	return fmt.Sprintf("%s  rev %d  %s  (%s, %s)", c.ID, c.Rev, describeEvent(c, e), progressText(c.Progress), c.Status)
}

// progressText is "1/3, 33%".
func progressText(p ckpt.Progress) string {
	return fmt.Sprintf("%d/%d, %.0f%%", p.Done, p.Total, p.Percent)
}

// describeEvent says in a few words what event e did; c is the state right
// after it and helps name the result (a step's new status, the cycle count).
func describeEvent(c *ckpt.Checkpoint, e ckpt.Event) string {
	switch e.Type {
	case ckpt.EventCreated:
		return "started"
	case ckpt.EventUpdate:
		keys := dataKeys(e.Data)
		if len(keys) == 0 {
			return "updated"
		}
		return "updated " + strings.Join(keys, ", ")
	case ckpt.EventStatus:
		var s ckpt.StatusChange
		_ = json.Unmarshal(e.Data, &s)
		if s.Reason != "" {
			return fmt.Sprintf("%s: %s", s.Status, clip(s.Reason, 60))
		}
		return string(s.Status)
	case ckpt.EventStep:
		var s ckpt.StepChange
		_ = json.Unmarshal(e.Data, &s)
		if s.Status == "" {
			return "step " + s.ID + " updated"
		}
		return fmt.Sprintf("step %s %s", s.ID, s.Status)
	case ckpt.EventDecision:
		var d ckpt.DecisionData
		_ = json.Unmarshal(e.Data, &d)
		return "decision: " + clip(d.Text, 60)
	case ckpt.EventBlocker:
		var b ckpt.BlockerChange
		_ = json.Unmarshal(e.Data, &b)
		switch {
		case b.Clear && b.ID == "":
			return "blockers cleared"
		case b.Clear:
			return "blocker " + b.ID + " cleared"
		}
		id := b.ID
		if id == "" && len(c.Blockers) > 0 {
			id = c.Blockers[len(c.Blockers)-1].ID
		}
		return fmt.Sprintf("blocker %s: %s", id, clip(b.Text, 60))
	case ckpt.EventError:
		var x ckpt.ErrorChange
		_ = json.Unmarshal(e.Data, &x)
		if x.Clear {
			return "errors cleared"
		}
		kind := "error"
		if x.Blocking {
			kind = "blocking error"
		}
		if x.Type != "" {
			kind += " [" + x.Type + "]"
		}
		return kind + ": " + clip(x.Message, 60)
	case ckpt.EventAccept:
		var a ckpt.AcceptChange
		_ = json.Unmarshal(e.Data, &a)
		if a.Met {
			return "criterion " + a.ID + " met"
		}
		return "criterion " + a.ID + " unmet"
	case ckpt.EventCycle:
		if c.Cycles.Max > 0 {
			return fmt.Sprintf("cycle %d/%d", c.Cycles.Count, c.Cycles.Max)
		}
		return fmt.Sprintf("cycle %d", c.Cycles.Count)
	case ckpt.EventNote:
		return "note added"
	case ckpt.EventCode:
		var cs ckpt.CodeState
		if json.Unmarshal(e.Data, &cs) == nil && cs.Root != "" {
			return "code at " + render.CodeLine(&cs)
		}
	}
	return string(e.Type)
}

// dataKeys lists the top-level keys of a JSON object in their order.
func dataKeys(data json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		if k, ok := t.(string); ok {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

// clip shortens s to at most n runes, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ago says how long before now t was, e.g. "3m ago"; "never" for a zero t.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + shortDuration(-d)
	}
	return shortDuration(d) + " ago"
}

// shortDuration prints d coarsely: 45s, 12m, 3h5m, 2d4h.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}
