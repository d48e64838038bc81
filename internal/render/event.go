package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// SummaryLine is the one line a write prints (every surface that
// reports a write in a line uses it), e.g.
//
//	kai-7/secondary-a  rev 4  step research done  (1/3, 33%, in_progress)
func SummaryLine(c *ckpt.Checkpoint, e ckpt.Event) string {
	return fmt.Sprintf("%s  rev %d  %s  (%s, %s)", c.ID, c.Rev, DescribeEvent(c, e), c.Progress.Count(), c.Status)
}

// BeatLine is the one line a heartbeat prints, e.g.
//
//	kai-7/secondary-a  beat at 2026-01-15T14:30:00Z  waiting: approve the schema
func BeatLine(id string, s ckpt.Signal) string {
	line := fmt.Sprintf("%s  beat at %s", id, s.At.Format(TimeLayout))
	if s.State != "" {
		line += "  " + string(s.State)
		if s.Reason != "" {
			line += ": " + s.Reason
		}
	}
	return line
}

// DescribeEvent says in a few words what event e did; c is the state right
// after it and helps name the result (a step's new status, the cycle count).
// Stored text in it is shortened to one line (squeeze) but not escaped:
// a terminal view passes it through Terminal.
func DescribeEvent(c *ckpt.Checkpoint, e ckpt.Event) string {
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
		_ = wire.Unmarshal(e.Data, &s)
		if s.Reason != "" {
			return fmt.Sprintf("%s: %s", s.Status, squeeze(s.Reason, 60))
		}
		return string(s.Status)
	case ckpt.EventStep:
		var s ckpt.StepChange
		_ = wire.Unmarshal(e.Data, &s)
		if s.Status == "" {
			return "step " + s.ID + " updated"
		}
		return fmt.Sprintf("step %s %s", s.ID, s.Status)
	case ckpt.EventDecision:
		var d ckpt.DecisionData
		_ = wire.Unmarshal(e.Data, &d)
		return "decision: " + squeeze(d.Text, 60)
	case ckpt.EventBlocker:
		var b ckpt.BlockerChange
		_ = wire.Unmarshal(e.Data, &b)
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
		return fmt.Sprintf("blocker %s: %s", id, squeeze(b.Text, 60))
	case ckpt.EventError:
		var x ckpt.ErrorChange
		_ = wire.Unmarshal(e.Data, &x)
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
		return kind + ": " + squeeze(x.Message, 60)
	case ckpt.EventAccept:
		var a ckpt.AcceptChange
		_ = wire.Unmarshal(e.Data, &a)
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
	case ckpt.EventTold:
		var m ckpt.Tell
		_ = wire.Unmarshal(e.Data, &m)
		from := e.Actor.Agent
		if from == "" {
			from = ckpt.UnknownSender
		}
		return fmt.Sprintf("message m%d from %s: %s", e.Seq, from, squeeze(m.Text, 60))
	case ckpt.EventDelivered:
		var d ckpt.Delivery
		_ = wire.Unmarshal(e.Data, &d)
		line := "delivered " + strings.Join(d.IDs, ", ")
		if d.Via != "" {
			line += " via " + d.Via
		}
		return line
	case ckpt.EventCode:
		var cs ckpt.CodeState
		if wire.Unmarshal(e.Data, &cs) == nil && cs.Root != "" {
			return "code at " + CodeLine(&cs)
		}
	}
	return string(e.Type)
}

// dataKeys lists the top-level keys of a JSON object in their order.
func dataKeys(data json.RawMessage) []string {
	if keys, ok := plainKeys(data); ok {
		return keys
	}
	return decodedKeys(data)
}

// decodedKeys is dataKeys by a json.Decoder, for any data: the keys before
// the first error.
func decodedKeys(data json.RawMessage) []string {
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

// plainKeys is dataKeys of a valid JSON object whose keys are ASCII
// without escapes (every event's data ckpt writes), found by scanning the
// bytes, without a json.Decoder and its reflection on every write's
// summary line; ok is false for anything else, which dataKeys decodes.
func plainKeys(data []byte) (keys []string, ok bool) {
	if !json.Valid(data) {
		return nil, false
	}
	depth, wantKey := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			j := i + 1
			for ; data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++ // valid JSON: the escape and the string end later
				}
			}
			if depth == 1 && wantKey {
				key := data[i+1 : j]
				for _, k := range key {
					if k == '\\' || k >= 0x80 {
						return nil, false
					}
				}
				keys = append(keys, string(key))
				wantKey = false
			}
			i = j
		case '{', '[':
			if depth == 0 && c != '{' {
				return nil, false
			}
			depth++
			wantKey = depth == 1
		case '}', ']':
			depth--
		case ',':
			wantKey = depth == 1
		default:
			if depth == 0 && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				return nil, false // a scalar at the top
			}
		}
	}
	return keys, true
}
