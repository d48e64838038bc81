package render

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// AppendSummaryJSON appends the JSON of s to dst: the same bytes as
// json.Marshal(s), written directly (ckpt ls --json writes one per
// checkpoint, and encoding/json's reflection and its re-validation of
// every time value were most of a 10,000-row listing). Input it does not
// write itself (a string needing escapes, a time out of RFC 3339's range,
// a presence record, a non-finite number) is handed to json.Marshal, so
// the result is always json.Marshal's (FuzzAppendSummaryJSON).
func AppendSummaryJSON(dst []byte, s *ckpt.Summary) ([]byte, error) {
	if out, ok := appendSummary(dst, s); ok {
		return out, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// jsonOut writes JSON; ok turns false at the first value it leaves to
// encoding/json.
type jsonOut struct {
	b  []byte
	ok bool
}

func appendSummary(dst []byte, s *ckpt.Summary) ([]byte, bool) {
	if s.Heartbeat.Presence != nil {
		return dst, false
	}
	o := jsonOut{b: dst, ok: true}
	o.key(`{"id":`)
	o.str(s.ID)
	o.key(`,"rev":`)
	o.b = strconv.AppendInt(o.b, s.Rev, 10)
	o.optStr(`,"parent":`, s.Parent)
	if len(s.Labels) > 0 {
		o.key(`,"labels":[`)
		for i, l := range s.Labels {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.str(l)
		}
		o.b = append(o.b, ']')
	}
	o.key(`,"agent":{`)
	first := len(o.b)
	o.optStr(`,"id":`, s.Agent.ID)
	o.optStr(`,"type":`, s.Agent.Type)
	o.optStr(`,"name":`, s.Agent.Name)
	if len(o.b) > first {
		o.b = append(o.b[:first], o.b[first+1:]...) // the first member's comma
	}
	o.b = append(o.b, '}')
	o.optStr(`,"session_id":`, s.SessionID)
	o.optStr(`,"title":`, s.Title)
	o.optStr(`,"task_id":`, s.TaskID)
	o.optStr(`,"stage":`, s.Stage)
	o.optStr(`,"phase":`, s.Phase)
	o.key(`,"status":`)
	o.str(string(s.Status))
	o.optStr(`,"current_step":`, s.CurrentStep)
	o.key(`,"progress":{"done":`)
	o.b = strconv.AppendInt(o.b, int64(s.Progress.Done), 10)
	o.key(`,"total":`)
	o.b = strconv.AppendInt(o.b, int64(s.Progress.Total), 10)
	o.key(`,"percent":`)
	o.float(s.Progress.Percent)
	o.key(`},"heartbeat":{`)
	first = len(o.b)
	if !s.Heartbeat.LastBeat.IsZero() {
		o.key(`,"last_beat":`)
		o.time(s.Heartbeat.LastBeat)
	}
	if s.Heartbeat.Interval != 0 {
		o.key(`,"interval":`)
		o.str(time.Duration(s.Heartbeat.Interval).String())
	}
	if len(o.b) > first {
		o.b = append(o.b[:first], o.b[first+1:]...)
	}
	o.b = append(o.b, '}')
	o.optInt(`,"active_blockers":`, s.ActiveBlockers)
	o.optInt(`,"blocking_errors":`, s.BlockingErrors)
	if s.Partial {
		o.key(`,"partial":true`)
	}
	if a := s.Archived; a != nil {
		o.key(`,"archived":{"reason":`)
		o.str(a.Reason)
		o.key(`,"at":`)
		o.time(a.At)
		o.optStr(`,"from":`, a.From)
		o.b = append(o.b, '}')
	}
	o.key(`,"started_at":`)
	o.time(s.StartedAt)
	o.key(`,"updated_at":`)
	o.time(s.UpdatedAt)
	if s.CompletedAt != nil {
		o.key(`,"completed_at":`)
		o.time(*s.CompletedAt)
	}
	o.b = append(o.b, '}')
	return o.b, o.ok
}

func (o *jsonOut) key(k string) { o.b = append(o.b, k...) }

// str writes a string that needs no escape in encoding/json's output
// (printable ASCII but " \ < > &); any other leaves the summary to
// encoding/json.
func (o *jsonOut) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			o.ok = false
			return
		}
	}
	o.b = append(append(append(o.b, '"'), s...), '"')
}

func (o *jsonOut) optStr(key, s string) {
	if s != "" {
		o.key(key)
		o.str(s)
	}
}

func (o *jsonOut) optInt(key string, n int) {
	if n != 0 {
		o.key(key)
		o.b = strconv.AppendInt(o.b, int64(n), 10)
	}
}

// float writes f as encoding/json does.
func (o *jsonOut) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		o.ok = false
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	o.b = strconv.AppendFloat(o.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json.
		if n := len(o.b); n >= 4 && o.b[n-4] == 'e' && o.b[n-3] == '-' && o.b[n-2] == '0' {
			o.b[n-2] = o.b[n-1]
			o.b = o.b[:n-1]
		}
	}
}

// time writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds), for the years and offsets it accepts.
func (o *jsonOut) time(t time.Time) {
	if y := t.Year(); y < 0 || y > 9999 {
		o.ok = false
		return
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		o.ok = false
		return
	}
	o.b = append(t.AppendFormat(append(o.b, '"'), time.RFC3339Nano), '"')
}
