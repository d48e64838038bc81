package ckpt

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendCheckpointJSON appends the JSON of c to dst: the same bytes as
// json.Marshal(c), written without reflection. encoding/json builds its
// encoder for the checkpoint's types on first use, a fixed cost that a
// short-lived process (one `ckpt update`) pays in full; a store writes the
// state on every append. What it does not write itself (a time out of RFC
// 3339's range, a non-finite number, a meta value that is not compact
// ASCII JSON) is handed to json.Marshal, so the result is always
// json.Marshal's (FuzzCheckpointJSON).
func AppendCheckpointJSON(dst []byte, c *Checkpoint) ([]byte, error) {
	w := jsonWriter{b: dst, ok: true}
	w.checkpoint(c)
	if w.ok {
		return w.b, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// jsonWriter writes JSON as encoding/json does; ok turns false at the first
// value it leaves to encoding/json.
type jsonWriter struct {
	b  []byte
	ok bool
}

func (w *jsonWriter) checkpoint(c *Checkpoint) {
	w.raw(`{"id":`)
	w.str(c.ID)
	w.raw(`,"rev":`)
	w.int(c.Rev)
	w.optStr(`,"parent":`, c.Parent)
	w.strs(`,"labels":`, c.Labels)
	w.raw(`,"agent":`)
	w.agent(c.Agent)
	w.raw(`,"session":`)
	w.session(c.Session)
	w.optStr(`,"title":`, c.Title)
	w.optStr(`,"task_id":`, c.TaskID)
	w.optStr(`,"stage":`, c.Stage)
	w.optStr(`,"phase":`, c.Phase)
	w.optStr(`,"current_step":`, c.CurrentStep)
	w.raw(`,"status":`)
	w.str(string(c.Status))
	w.optStr(`,"status_reason":`, c.StatusReason)
	w.steps(c.Steps)
	w.raw(`,"progress":{"done":`)
	w.int(int64(c.Progress.Done))
	w.raw(`,"total":`)
	w.int(int64(c.Progress.Total))
	w.raw(`,"percent":`)
	w.float(c.Progress.Percent)
	w.raw(`}`)
	w.criteria(c.Acceptance)
	w.decisions(c.Decisions)
	w.blockers(c.Blockers)
	w.errorItems(c.Errors)
	w.raw(`,"files":{`)
	n := len(w.b)
	w.strs(`,"created":`, c.Files.Created)
	w.strs(`,"modified":`, c.Files.Modified)
	w.close(n, '}')
	w.raw(`,"context":{`)
	n = len(w.b)
	w.optStr(`,"last_processed":`, c.Context.LastProcessed)
	w.optStr(`,"next_to_process":`, c.Context.NextToProcess)
	w.optStr(`,"notes":`, c.Context.Notes)
	w.close(n, '}')
	w.raw(`,"resume":{"resumable":`)
	w.bool(c.Resume.Resumable)
	w.optStr(`,"instructions":`, c.Resume.Instructions)
	w.strs(`,"next_steps":`, c.Resume.NextSteps)
	w.raw(`},"cycles":{"count":`)
	w.int(int64(c.Cycles.Count))
	w.optInt(`,"max":`, c.Cycles.Max)
	w.raw(`}`)
	w.scores(c.ReviewScores)
	w.meta(c.Meta)
	w.raw(`,"heartbeat":`)
	w.heartbeat(c.Heartbeat)
	if c.Code != nil {
		w.raw(`,"code":`)
		w.code(c.Code)
	}
	w.optInt(`,"resumes_without_progress":`, c.ResumesWithoutProgress)
	w.archive(c.Archived)
	w.messages(c.Messages)
	w.raw(`,"started_at":`)
	w.time(c.StartedAt)
	w.raw(`,"updated_at":`)
	w.time(c.UpdatedAt)
	w.optTime(`,"completed_at":`, c.CompletedAt)
	w.raw(`}`)
}

func (w *jsonWriter) agent(a Agent) {
	w.raw(`{`)
	n := len(w.b)
	w.optStr(`,"id":`, a.ID)
	w.optStr(`,"type":`, a.Type)
	w.optStr(`,"name":`, a.Name)
	w.close(n, '}')
}

func (w *jsonWriter) session(s Session) {
	w.raw(`{`)
	n := len(w.b)
	w.optStr(`,"id":`, s.ID)
	w.optInt(`,"number":`, s.Number)
	if !s.StartedAt.IsZero() {
		w.raw(`,"started_at":`)
		w.time(s.StartedAt)
	}
	w.close(n, '}')
}

func (w *jsonWriter) steps(steps []Step) {
	if len(steps) == 0 {
		return
	}
	w.raw(`,"steps":[`)
	for i := range steps {
		s := &steps[i]
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"id":`)
		w.str(s.ID)
		w.optStr(`,"title":`, s.Title)
		w.raw(`,"status":`)
		w.str(string(s.Status))
		w.optStr(`,"phase":`, s.Phase)
		w.optTime(`,"started_at":`, s.StartedAt)
		w.optTime(`,"completed_at":`, s.CompletedAt)
		w.optStr(`,"by":`, s.By)
		w.optStr(`,"output":`, s.Output)
		w.optStr(`,"notes":`, s.Notes)
		w.raw(`}`)
	}
	w.raw(`]`)
}

func (w *jsonWriter) criteria(cs []Criterion) {
	if len(cs) == 0 {
		return
	}
	w.raw(`,"acceptance":[`)
	for i, c := range cs {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"id":`)
		w.str(c.ID)
		w.optStr(`,"title":`, c.Title)
		w.raw(`,"met":`)
		w.bool(c.Met)
		w.optTime(`,"verified_at":`, c.VerifiedAt)
		w.raw(`}`)
	}
	w.raw(`]`)
}

func (w *jsonWriter) decisions(ds []Decision) {
	if len(ds) == 0 {
		return
	}
	w.raw(`,"decisions":[`)
	for i, d := range ds {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"at":`)
		w.time(d.At)
		w.raw(`,"text":`)
		w.str(d.Text)
		w.optStr(`,"reason":`, d.Reason)
		w.raw(`}`)
	}
	w.raw(`]`)
}

func (w *jsonWriter) blockers(bs []Blocker) {
	if len(bs) == 0 {
		return
	}
	w.raw(`,"blockers":[`)
	for i, b := range bs {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"id":`)
		w.str(b.ID)
		w.raw(`,"text":`)
		w.str(b.Text)
		w.raw(`,"since":`)
		w.time(b.Since)
		w.optTime(`,"cleared_at":`, b.ClearedAt)
		w.raw(`}`)
	}
	w.raw(`]`)
}

func (w *jsonWriter) messages(ms []Message) {
	if len(ms) == 0 {
		return
	}
	w.raw(`,"messages":[`)
	for i, m := range ms {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"id":`)
		w.str(m.ID)
		w.raw(`,"from":`)
		w.str(m.From)
		w.raw(`,"at":`)
		w.time(m.At)
		w.raw(`,"text":`)
		w.str(m.Text)
		w.raw(`}`)
	}
	w.raw(`]`)
}

func (w *jsonWriter) errorItems(es []ErrorItem) {
	if len(es) == 0 {
		return
	}
	w.raw(`,"errors":[`)
	for i, e := range es {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"at":`)
		w.time(e.At)
		w.optStr(`,"type":`, e.Type)
		w.raw(`,"message":`)
		w.str(e.Message)
		if e.Blocking {
			w.raw(`,"blocking":true`)
		}
		w.optTime(`,"cleared_at":`, e.ClearedAt)
		w.raw(`}`)
	}
	w.raw(`]`)
}

// scores writes the review scores, keys sorted as encoding/json sorts them.
func (w *jsonWriter) scores(m map[string]*float64) {
	if len(m) == 0 {
		return
	}
	w.raw(`,"review_scores":{`)
	for i, k := range sortedKeys(m) {
		if i > 0 {
			w.raw(`,`)
		}
		w.str(k)
		w.raw(`:`)
		if v := m[k]; v != nil {
			w.float(*v)
		} else {
			w.raw(`null`)
		}
	}
	w.raw(`}`)
}

// meta writes the meta values as they are when they are compact JSON of
// printable ASCII without < > & (what encoding/json would leave as it is);
// any other is left to encoding/json, which compacts and escapes it.
func (w *jsonWriter) meta(m map[string]json.RawMessage) {
	if len(m) == 0 {
		return
	}
	w.raw(`,"meta":{`)
	for i, k := range sortedKeys(m) {
		if i > 0 {
			w.raw(`,`)
		}
		w.str(k)
		w.raw(`:`)
		w.rawJSON(m[k])
	}
	w.raw(`}`)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (w *jsonWriter) heartbeat(h Heartbeat) {
	w.raw(`{`)
	n := len(w.b)
	if !h.LastBeat.IsZero() {
		w.raw(`,"last_beat":`)
		w.time(h.LastBeat)
	}
	if h.Interval != 0 {
		w.raw(`,"interval":`)
		w.str(time.Duration(h.Interval).String())
	}
	if p := h.Presence; p != nil {
		w.raw(`,"presence":{`)
		m := len(w.b)
		w.optStr(`,"state":`, string(p.State))
		if !p.Since.IsZero() {
			w.raw(`,"since":`)
			w.time(p.Since)
		}
		w.optStr(`,"reason":`, p.Reason)
		if pr := p.Process; pr != nil {
			w.raw(`,"process":{"host":`)
			w.str(pr.Host)
			w.raw(`,"pid":`)
			w.int(int64(pr.PID))
			w.optStr(`,"start":`, pr.Start)
			w.raw(`}`)
		}
		w.close(m, '}')
	}
	w.close(n, '}')
}

func (w *jsonWriter) code(c *CodeState) {
	w.raw(`{"root":`)
	w.str(c.Root)
	w.optStr(`,"host":`, c.Host)
	w.optStr(`,"branch":`, c.Branch)
	w.optStr(`,"head":`, c.Head)
	w.optStr(`,"upstream":`, c.Upstream)
	w.optInt(`,"ahead":`, c.Ahead)
	w.optInt(`,"behind":`, c.Behind)
	w.raw(`,"uncommitted":`)
	w.int(int64(c.Uncommitted))
	w.optInt(`,"untracked":`, c.Untracked)
	w.raw(`,"at":`)
	w.time(c.At)
	w.raw(`}`)
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

// close ends an object whose members start at n, each written with a
// leading comma: the first one's comma goes.
func (w *jsonWriter) close(n int, c byte) {
	if len(w.b) > n {
		w.b = append(w.b[:n], w.b[n+1:]...)
	}
	w.b = append(w.b, c)
}

func (w *jsonWriter) int(n int64) { w.b = strconv.AppendInt(w.b, n, 10) }

func (w *jsonWriter) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

func (w *jsonWriter) optStr(key, s string) {
	if s != "" {
		w.raw(key)
		w.str(s)
	}
}

func (w *jsonWriter) optInt(key string, n int) {
	if n != 0 {
		w.raw(key)
		w.int(int64(n))
	}
}

func (w *jsonWriter) optTime(key string, t *time.Time) {
	if t != nil {
		w.raw(key)
		w.time(*t)
	}
}

func (w *jsonWriter) strs(key string, ss []string) {
	if len(ss) == 0 {
		return
	}
	w.raw(key)
	w.raw(`[`)
	for i, s := range ss {
		if i > 0 {
			w.raw(`,`)
		}
		w.str(s)
	}
	w.raw(`]`)
}

const hexDigits = "0123456789abcdef"

// str writes s quoted and escaped as encoding/json does with HTML escaping
// on: invalid UTF-8 becomes \ufffd, U+2028 and U+2029 are escaped.
func (w *jsonWriter) str(s string) {
	w.b = append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			w.b = append(w.b, s[start:i]...)
			switch c {
			case '"', '\\':
				w.b = append(w.b, '\\', c)
			case '\b':
				w.b = append(w.b, '\\', 'b')
			case '\f':
				w.b = append(w.b, '\\', 'f')
			case '\n':
				w.b = append(w.b, '\\', 'n')
			case '\r':
				w.b = append(w.b, '\\', 'r')
			case '\t':
				w.b = append(w.b, '\\', 't')
			default:
				w.b = append(w.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.b = append(w.b, s[start:i]...)
			w.b = append(w.b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			w.b = append(w.b, s[start:i]...)
			w.b = append(w.b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	w.b = append(w.b, s[start:]...)
	w.b = append(w.b, '"')
}

// float writes f as encoding/json does; a non-finite f is left to it (an
// error).
func (w *jsonWriter) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.ok = false
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9, as encoding/json.
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

// time writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds), for the years and offsets it accepts; others are left to
// it (an error).
func (w *jsonWriter) time(t time.Time) {
	if y := t.Year(); y < 0 || y > 9999 {
		w.ok = false
		return
	}
	if _, off := t.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
		w.ok = false
		return
	}
	w.b = append(t.AppendFormat(append(w.b, '"'), time.RFC3339Nano), '"')
}

// AppendSummaryJSON appends the JSON of s to dst: the same bytes as
// json.Marshal(s), written as AppendCheckpointJSON writes a checkpoint
// (FuzzSummaryJSON).
func AppendSummaryJSON(dst []byte, s *Summary) ([]byte, error) {
	w := jsonWriter{b: dst, ok: true}
	w.summary(s)
	if w.ok {
		return w.b, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

func (w *jsonWriter) summary(s *Summary) {
	w.raw(`{"id":`)
	w.str(s.ID)
	w.raw(`,"rev":`)
	w.int(s.Rev)
	w.optStr(`,"parent":`, s.Parent)
	w.strs(`,"labels":`, s.Labels)
	w.raw(`,"agent":`)
	w.agent(s.Agent)
	w.optStr(`,"session_id":`, s.SessionID)
	w.optStr(`,"title":`, s.Title)
	w.optStr(`,"task_id":`, s.TaskID)
	w.optStr(`,"stage":`, s.Stage)
	w.optStr(`,"phase":`, s.Phase)
	w.raw(`,"status":`)
	w.str(string(s.Status))
	w.optStr(`,"current_step":`, s.CurrentStep)
	w.raw(`,"progress":{"done":`)
	w.int(int64(s.Progress.Done))
	w.raw(`,"total":`)
	w.int(int64(s.Progress.Total))
	w.raw(`,"percent":`)
	w.float(s.Progress.Percent)
	w.raw(`},"heartbeat":`)
	w.heartbeat(s.Heartbeat)
	w.optInt(`,"active_blockers":`, s.ActiveBlockers)
	w.optInt(`,"blocking_errors":`, s.BlockingErrors)
	if s.Partial {
		w.raw(`,"partial":true`)
	}
	w.optInt(`,"messages":`, s.Messages)
	w.archive(s.Archived)
	w.raw(`,"started_at":`)
	w.time(s.StartedAt)
	w.raw(`,"updated_at":`)
	w.time(s.UpdatedAt)
	w.optTime(`,"completed_at":`, s.CompletedAt)
	w.raw(`}`)
}

func (w *jsonWriter) archive(a *Archive) {
	if a != nil {
		w.raw(`,"archived":{"reason":`)
		w.str(a.Reason)
		w.raw(`,"at":`)
		w.time(a.At)
		w.optStr(`,"from":`, a.From)
		w.raw(`}`)
	}
}

// appendEventJSON appends json.Marshal(e)'s bytes (the body of a history
// line); ok is false when it leaves e to json.Marshal.
func appendEventJSON(dst []byte, e *Event) ([]byte, bool) {
	w := jsonWriter{b: dst, ok: true}
	w.raw(`{"seq":`)
	w.int(e.Seq)
	w.raw(`,"at":`)
	w.time(e.At)
	w.raw(`,"type":`)
	w.str(string(e.Type))
	if e.Actor != (Actor{}) {
		w.raw(`,"actor":{`)
		n := len(w.b)
		w.optStr(`,"agent":`, e.Actor.Agent)
		w.optStr(`,"session":`, e.Actor.Session)
		w.close(n, '}')
	}
	w.optStr(`,"key":`, e.Key)
	if len(e.Data) > 0 {
		w.raw(`,"data":`)
		w.rawJSON(e.Data)
	}
	w.optStr(`,"prev":`, e.Prev)
	w.raw(`}`)
	return w.b, w.ok
}

// CompactJSON returns raw as json.Marshal writes a json.RawMessage
// (compacted, HTML-escaped): a copy of raw when it already is so (the JSON
// json.Marshal wrote), else what encoding/json makes of it.
func CompactJSON(raw json.RawMessage) ([]byte, error) {
	w := jsonWriter{ok: true}
	if w.rawJSON(raw); w.ok {
		return w.b, nil
	}
	return json.Marshal(raw)
}

// rawJSON writes v as it is when it is valid compact JSON of printable
// ASCII without < > & (what encoding/json leaves as it is); any other is
// left to encoding/json, which compacts and escapes it.
func (w *jsonWriter) rawJSON(v json.RawMessage) {
	if v == nil {
		w.raw(`null`)
		return
	}
	for _, c := range v {
		if c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			w.ok = false
			return
		}
	}
	if r := (jsonReader{b: v, ok: true}); r.value(0) == nil || r.i != len(v) {
		w.ok = false // not JSON, or a form the reader leaves to encoding/json
		return
	}
	w.b = append(w.b, v...)
}
