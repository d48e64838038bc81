package filestore

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
)

// decodeSummary decodes the JSON of a summary as the index keeps it
// (json.Marshal of a ckpt.Summary without presence) into s, five times
// faster than encoding/json: a listing of every checkpoint decodes one per
// row, and at 100,000 rows encoding/json's reflection was most of a
// stale report's time. It knows only that form: ok is false for anything
// else (an escape in a string, a null, a presence, an unknown key, a
// number in another form), and the caller then decodes with encoding/json,
// so the result is always what encoding/json gives (FuzzDecodeSummary).
func decodeSummary(b []byte, s *ckpt.Summary) (ok bool) {
	d := summaryDecoder{b: b}
	ok = d.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			s.ID, ok = d.str()
		case "rev":
			s.Rev, ok = d.int()
		case "parent":
			s.Parent, ok = d.str()
		case "labels":
			s.Labels, ok = d.strs()
		case "agent":
			ok = d.agent(&s.Agent)
		case "session_id":
			s.SessionID, ok = d.str()
		case "title":
			s.Title, ok = d.str()
		case "task_id":
			s.TaskID, ok = d.str()
		case "stage":
			s.Stage, ok = d.str()
		case "phase":
			s.Phase, ok = d.str()
		case "status":
			var st string
			st, ok = d.str()
			s.Status = ckpt.Status(st)
		case "current_step":
			s.CurrentStep, ok = d.str()
		case "progress":
			ok = d.progress(&s.Progress)
		case "heartbeat":
			ok = d.heartbeat(&s.Heartbeat)
		case "active_blockers":
			s.ActiveBlockers, ok = d.intN()
		case "blocking_errors":
			s.BlockingErrors, ok = d.intN()
		case "partial":
			s.Partial, ok = d.bool()
		case "archived":
			if s.Archived == nil { // a repeated key fills the same one, as encoding/json
				s.Archived = &ckpt.Archive{}
			}
			ok = d.archive(s.Archived)
		case "started_at":
			ok = d.time(&s.StartedAt)
		case "updated_at":
			ok = d.time(&s.UpdatedAt)
		case "completed_at":
			if s.CompletedAt == nil {
				s.CompletedAt = &time.Time{}
			}
			ok = d.time(s.CompletedAt)
		default:
			return false
		}
		return ok
	})
	return ok && d.i == len(d.b)
}

// summaryDecoder reads the compact JSON json.Marshal writes, no spaces.
type summaryDecoder struct {
	b []byte
	i int
}

func (d *summaryDecoder) next(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, calling member for each key with the decoder
// at its value; member reads the value. The key is the input's own bytes
// (a switch on string(key) allocates nothing).
func (d *summaryDecoder) object(member func(key []byte) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		key, ok := d.raw()
		if !ok || !d.next(':') || !member(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// str reads a string without escapes, of valid UTF-8 and no control
// characters.
func (d *summaryDecoder) str() (string, bool) {
	raw, ok := d.raw()
	if !ok {
		return "", false
	}
	return string(raw), true
}

// raw is str returning the input's bytes between the quotes.
func (d *summaryDecoder) raw() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start, ascii := d.i, true
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			raw := d.b[start:d.i]
			d.i++
			if !ascii && !utf8.Valid(raw) {
				return nil, false
			}
			return raw, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (d *summaryDecoder) strs() ([]string, bool) {
	if !d.next('[') {
		return nil, false
	}
	out := []string{}
	if d.next(']') {
		return out, true
	}
	for {
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if d.next(']') {
			return out, true
		}
		if !d.next(',') {
			return nil, false
		}
	}
}

// number returns the next JSON number's text, in the JSON grammar:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *summaryDecoder) number() ([]byte, bool) {
	start := d.i
	d.next('-')
	digits := func() int {
		n := 0
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.next('0') {
		if d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			return nil, false
		}
	} else if digits() == 0 {
		return nil, false
	}
	if d.next('.') && digits() == 0 {
		return nil, false
	}
	if d.next('e') || d.next('E') {
		if !d.next('+') {
			d.next('-')
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return d.b[start:d.i], true
}

func (d *summaryDecoder) int() (int64, bool) {
	t, ok := d.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(t), 10, 64)
	return n, err == nil
}

func (d *summaryDecoder) intN() (int, bool) {
	n, ok := d.int()
	return int(n), ok && int64(int(n)) == n
}

func (d *summaryDecoder) float() (float64, bool) {
	t, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(t), 64)
	return f, err == nil
}

func (d *summaryDecoder) bool() (bool, bool) {
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		d.i += 4
		return true, true
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		d.i += 5
		return false, true
	}
	return false, false
}

// time reads a time as time.Time's UnmarshalJSON does (RFC 3339).
func (d *summaryDecoder) time(t *time.Time) bool {
	start := d.i
	if _, ok := d.str(); !ok {
		return false
	}
	return t.UnmarshalJSON(d.b[start:d.i]) == nil
}

func (d *summaryDecoder) agent(a *ckpt.Agent) bool {
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "id":
			a.ID, ok = d.str()
		case "type":
			a.Type, ok = d.str()
		case "name":
			a.Name, ok = d.str()
		}
		return ok
	})
}

func (d *summaryDecoder) progress(p *ckpt.Progress) bool {
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "done":
			p.Done, ok = d.intN()
		case "total":
			p.Total, ok = d.intN()
		case "percent":
			p.Percent, ok = d.float()
		}
		return ok
	})
}

// heartbeat reads a heartbeat without presence (the index keeps none).
func (d *summaryDecoder) heartbeat(h *ckpt.Heartbeat) bool {
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "last_beat":
			ok = d.time(&h.LastBeat)
		case "interval":
			var s string
			if s, ok = d.str(); ok {
				var iv time.Duration
				iv, err := time.ParseDuration(s)
				h.Interval, ok = ckpt.Duration(iv), err == nil
			}
		}
		return ok
	})
}

func (d *summaryDecoder) archive(a *ckpt.Archive) bool {
	return d.object(func(key []byte) (ok bool) {
		switch string(key) {
		case "reason":
			a.Reason, ok = d.str()
		case "at":
			ok = d.time(&a.At)
		case "from":
			a.From, ok = d.str()
		}
		return ok
	})
}
