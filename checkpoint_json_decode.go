package ckpt

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// DecodeCheckpointJSON decodes data as json.Unmarshal into a zero
// Checkpoint does. Input in exactly the form AppendCheckpointJSON writes
// (members in order, no spaces, no null but in review scores, no
// presence) is read without reflection; anything else, an error included,
// goes to json.Unmarshal, so the result is always its result
// (FuzzDecodeCheckpointJSON).
func DecodeCheckpointJSON(data []byte) (*Checkpoint, error) {
	if c, ok := decodeCheckpointFast(data); ok {
		return c, nil
	}
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func decodeCheckpointFast(data []byte) (*Checkpoint, bool) {
	r := jsonReader{b: data, ok: true}
	c := new(Checkpoint)
	r.checkpoint(c)
	return c, r.ok && r.i == len(r.b)
}

// jsonReader reads JSON of the one form json.Marshal writes; ok turns false
// at anything else.
type jsonReader struct {
	b  []byte
	i  int
	ok bool
}

// object reads an object whose keys are among fields, in their order
// (json.Marshal's), each once; member reads the value of each.
func (r *jsonReader) object(fields []string, member func(key string)) {
	if !r.lit("{") || r.has("}") {
		return
	}
	next := 0
	for r.ok {
		// The key is compared in place: a field name has no escape, and
		// member gets the field's own string (no allocation per key).
		k := r.plainKey()
		for next < len(fields) && fields[next] != string(k) {
			next++
		}
		if next == len(fields) {
			r.ok = false
			return
		}
		next++
		member(fields[next-1])
		if !r.has(",") {
			r.lit("}")
			return
		}
	}
}

// plainKey reads an object key without escapes and its colon, returning
// the input's own bytes.
func (r *jsonReader) plainKey() []byte {
	if !r.lit(`"`) {
		return nil
	}
	start := r.i
	for r.i < len(r.b) && r.b[r.i] != '"' && r.b[r.i] != '\\' {
		r.i++
	}
	k := r.b[start:r.i]
	r.lit(`"`)
	r.lit(":")
	return k
}

func (r *jsonReader) key() string {
	k := r.str()
	r.lit(":")
	return k
}

func (r *jsonReader) lit(s string) bool {
	if r.ok && len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	r.ok = false
	return false
}

func (r *jsonReader) has(s string) bool {
	if r.ok && len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// str reads a string: valid UTF-8, escapes but surrogates.
func (r *jsonReader) str() string {
	if !r.lit(`"`) {
		return ""
	}
	start, plain := r.i, true
	for ; r.i < len(r.b); r.i++ {
		c := r.b[r.i]
		switch {
		case c == '"':
			raw := r.b[start:r.i]
			r.i++
			if !utf8.Valid(raw) {
				r.ok = false
				return ""
			}
			if plain {
				return string(raw)
			}
			return r.unescape(raw)
		case c == '\\':
			plain = false
			r.i++
		case c < ' ':
			r.ok = false
			return ""
		}
	}
	r.ok = false
	return ""
}

func (r *jsonReader) unescape(raw []byte) string {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			out = append(out, raw[i])
			continue
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 >= len(raw) {
				r.ok = false
				return ""
			}
			v, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 16)
			if err != nil || (v >= 0xd800 && v < 0xe000) {
				r.ok = false
				return ""
			}
			out = utf8.AppendRune(out, rune(v))
			i += 4
		default:
			r.ok = false
			return ""
		}
	}
	return string(out)
}

// digits reads a JSON number's bytes: -?(0|[1-9][0-9]*) and, if frac,
// (.[0-9]+)?([eE][+-]?[0-9]+)?.
func (r *jsonReader) digits(frac bool) string {
	start := r.i
	r.has("-")
	run := func() int {
		n := 0
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
			n++
		}
		return n
	}
	if r.has("0") {
		if r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.ok = false
		}
	} else if run() == 0 {
		r.ok = false
	}
	if frac {
		if r.has(".") && run() == 0 {
			r.ok = false
		}
		if r.has("e") || r.has("E") {
			if !r.has("+") {
				r.has("-")
			}
			if run() == 0 {
				r.ok = false
			}
		}
	}
	if !r.ok {
		return ""
	}
	return string(r.b[start:r.i])
}

func (r *jsonReader) int() int64 {
	s := r.digits(false)
	if !r.ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		r.ok = false
	}
	return n
}

func (r *jsonReader) intv() int { return int(r.int()) }

func (r *jsonReader) float() float64 {
	s := r.digits(true)
	if !r.ok {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.ok = false
	}
	return f
}

func (r *jsonReader) bool() bool {
	if r.has("true") {
		return true
	}
	r.lit("false")
	return false
}

// time reads a time as time.Time's UnmarshalJSON does, on the same bytes.
func (r *jsonReader) time() time.Time {
	start := r.i
	if !r.lit(`"`) {
		return time.Time{}
	}
	for r.i < len(r.b) && r.b[r.i] != '"' && r.b[r.i] != '\\' {
		r.i++
	}
	if !r.lit(`"`) {
		return time.Time{}
	}
	var t time.Time
	if t.UnmarshalJSON(r.b[start:r.i]) != nil {
		r.ok = false
	}
	return t
}

func (r *jsonReader) timePtr() *time.Time {
	t := r.time()
	return &t
}

func (r *jsonReader) strs() []string {
	out := []string{}
	r.array(func() { out = append(out, r.str()) })
	return out
}

func (r *jsonReader) array(elem func()) {
	if !r.lit("[") || r.has("]") {
		return
	}
	for r.ok {
		elem()
		if !r.has(",") {
			r.lit("]")
			return
		}
	}
}

// value reads any JSON value, checked, and returns its bytes.
func (r *jsonReader) value(depth int) []byte {
	start := r.i
	if depth > 100 || r.i >= len(r.b) {
		r.ok = false
		return nil
	}
	switch c := r.b[r.i]; {
	case c == '"':
		r.str()
	case c == '{':
		r.i++
		if !r.has("}") {
			for r.ok {
				r.str()
				r.lit(":")
				r.value(depth + 1)
				if !r.has(",") {
					r.lit("}")
					break
				}
			}
		}
	case c == '[':
		r.array(func() { r.value(depth + 1) })
	case c == 't':
		r.lit("true")
	case c == 'f':
		r.lit("false")
	case c == 'n':
		r.lit("null")
	default:
		r.digits(true)
	}
	if !r.ok {
		return nil
	}
	return r.b[start:r.i]
}

var checkpointFields = []string{"id", "rev", "parent", "labels", "agent", "session", "title", "task_id",
	"stage", "phase", "current_step", "status", "status_reason", "steps", "progress", "acceptance",
	"decisions", "blockers", "errors", "files", "context", "resume", "cycles", "review_scores", "meta",
	"heartbeat", "code", "resumes_without_progress", "archived", "messages", "started_at", "updated_at", "completed_at"}

func (r *jsonReader) checkpoint(c *Checkpoint) {
	r.object(checkpointFields, func(k string) {
		switch k {
		case "id":
			c.ID = r.str()
		case "rev":
			c.Rev = r.int()
		case "parent":
			c.Parent = r.str()
		case "labels":
			c.Labels = r.strs()
		case "agent":
			r.agent(&c.Agent)
		case "session":
			r.session(&c.Session)
		case "title":
			c.Title = r.str()
		case "task_id":
			c.TaskID = r.str()
		case "stage":
			c.Stage = r.str()
		case "phase":
			c.Phase = r.str()
		case "current_step":
			c.CurrentStep = r.str()
		case "status":
			c.Status = Status(r.str())
		case "status_reason":
			c.StatusReason = r.str()
		case "steps":
			c.Steps = []Step{}
			r.array(func() { c.Steps = append(c.Steps, r.step()) })
		case "progress":
			r.progress(&c.Progress)
		case "acceptance":
			c.Acceptance = []Criterion{}
			r.array(func() { c.Acceptance = append(c.Acceptance, r.criterion()) })
		case "decisions":
			c.Decisions = []Decision{}
			r.array(func() { c.Decisions = append(c.Decisions, r.decision()) })
		case "blockers":
			c.Blockers = []Blocker{}
			r.array(func() { c.Blockers = append(c.Blockers, r.blocker()) })
		case "errors":
			c.Errors = []ErrorItem{}
			r.array(func() { c.Errors = append(c.Errors, r.errorItem()) })
		default:
			r.checkpointRest(c, k)
		}
	})
}

// checkpointRest reads the members of a checkpoint after errors.
func (r *jsonReader) checkpointRest(c *Checkpoint, k string) {
	switch k {
	case "files":
		r.object([]string{"created", "modified"}, func(k string) {
			if k == "created" {
				c.Files.Created = r.strs()
			} else {
				c.Files.Modified = r.strs()
			}
		})
	case "context":
		r.object([]string{"last_processed", "next_to_process", "notes"}, func(k string) {
			switch k {
			case "last_processed":
				c.Context.LastProcessed = r.str()
			case "next_to_process":
				c.Context.NextToProcess = r.str()
			default:
				c.Context.Notes = r.str()
			}
		})
	case "resume":
		r.object([]string{"resumable", "instructions", "next_steps"}, func(k string) {
			switch k {
			case "resumable":
				c.Resume.Resumable = r.bool()
			case "instructions":
				c.Resume.Instructions = r.str()
			default:
				c.Resume.NextSteps = r.strs()
			}
		})
	case "cycles":
		r.object([]string{"count", "max"}, func(k string) {
			if k == "count" {
				c.Cycles.Count = r.intv()
			} else {
				c.Cycles.Max = r.intv()
			}
		})
	case "review_scores":
		c.ReviewScores = r.scores()
	case "meta":
		c.Meta = r.meta()
	case "heartbeat":
		r.heartbeat(&c.Heartbeat)
	case "code":
		c.Code = r.code()
	case "resumes_without_progress":
		c.ResumesWithoutProgress = r.intv()
	case "archived":
		c.Archived = r.archive()
	case "messages":
		c.Messages = []Message{}
		r.array(func() { c.Messages = append(c.Messages, r.message()) })
	case "started_at":
		c.StartedAt = r.time()
	case "updated_at":
		c.UpdatedAt = r.time()
	case "completed_at":
		c.CompletedAt = r.timePtr()
	}
}

func (r *jsonReader) scores() map[string]*float64 {
	m := map[string]*float64{}
	r.mapOf(func(k string) {
		if r.has("null") {
			m[k] = nil
			return
		}
		v := r.float()
		m[k] = &v
	})
	return m
}

func (r *jsonReader) meta() map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	r.mapOf(func(k string) { m[k] = json.RawMessage(append([]byte(nil), r.value(0)...)) })
	return m
}

// mapOf reads an object of any keys, each value read by value.
func (r *jsonReader) mapOf(value func(key string)) {
	if !r.lit("{") || r.has("}") {
		return
	}
	for r.ok {
		value(r.key())
		if !r.has(",") {
			r.lit("}")
			return
		}
	}
}

var progressFields = []string{"done", "total", "percent"}

func (r *jsonReader) progress(p *Progress) {
	r.object(progressFields, func(k string) {
		switch k {
		case "done":
			p.Done = r.intv()
		case "total":
			p.Total = r.intv()
		default:
			p.Percent = r.float()
		}
	})
}

var archiveFields = []string{"reason", "at", "from"}

func (r *jsonReader) archive() *Archive {
	a := &Archive{}
	r.object(archiveFields, func(k string) {
		switch k {
		case "reason":
			a.Reason = r.str()
		case "at":
			a.At = r.time()
		default:
			a.From = r.str()
		}
	})
	return a
}

var agentFields = []string{"id", "type", "name"}

func (r *jsonReader) agent(a *Agent) {
	r.object(agentFields, func(k string) {
		switch k {
		case "id":
			a.ID = r.str()
		case "type":
			a.Type = r.str()
		default:
			a.Name = r.str()
		}
	})
}

func (r *jsonReader) session(s *Session) {
	r.object([]string{"id", "number", "started_at"}, func(k string) {
		switch k {
		case "id":
			s.ID = r.str()
		case "number":
			s.Number = r.intv()
		default:
			s.StartedAt = r.time()
		}
	})
}

var stepFields = []string{"id", "title", "status", "phase", "started_at", "completed_at", "by", "output", "notes"}

func (r *jsonReader) step() (s Step) {
	r.object(stepFields, func(k string) {
		switch k {
		case "id":
			s.ID = r.str()
		case "title":
			s.Title = r.str()
		case "status":
			s.Status = StepStatus(r.str())
		case "phase":
			s.Phase = r.str()
		case "started_at":
			s.StartedAt = r.timePtr()
		case "completed_at":
			s.CompletedAt = r.timePtr()
		case "by":
			s.By = r.str()
		case "output":
			s.Output = r.str()
		default:
			s.Notes = r.str()
		}
	})
	return s
}

func (r *jsonReader) criterion() (c Criterion) {
	r.object([]string{"id", "title", "met", "verified_at"}, func(k string) {
		switch k {
		case "id":
			c.ID = r.str()
		case "title":
			c.Title = r.str()
		case "met":
			c.Met = r.bool()
		default:
			c.VerifiedAt = r.timePtr()
		}
	})
	return c
}

func (r *jsonReader) decision() (d Decision) {
	r.object([]string{"at", "text", "reason"}, func(k string) {
		switch k {
		case "at":
			d.At = r.time()
		case "text":
			d.Text = r.str()
		default:
			d.Reason = r.str()
		}
	})
	return d
}

func (r *jsonReader) blocker() (b Blocker) {
	r.object([]string{"id", "text", "since", "cleared_at"}, func(k string) {
		switch k {
		case "id":
			b.ID = r.str()
		case "text":
			b.Text = r.str()
		case "since":
			b.Since = r.time()
		default:
			b.ClearedAt = r.timePtr()
		}
	})
	return b
}

func (r *jsonReader) message() (m Message) {
	r.object([]string{"id", "from", "at", "text"}, func(k string) {
		switch k {
		case "id":
			m.ID = r.str()
		case "from":
			m.From = r.str()
		case "at":
			m.At = r.time()
		default:
			m.Text = r.str()
		}
	})
	return m
}

func (r *jsonReader) errorItem() (e ErrorItem) {
	r.object([]string{"at", "type", "message", "blocking", "cleared_at"}, func(k string) {
		switch k {
		case "at":
			e.At = r.time()
		case "type":
			e.Type = r.str()
		case "message":
			e.Message = r.str()
		case "blocking":
			e.Blocking = r.bool()
		default:
			e.ClearedAt = r.timePtr()
		}
	})
	return e
}

// heartbeat reads a heartbeat without presence (a state file holds none;
// one that does goes to encoding/json).
func (r *jsonReader) heartbeat(h *Heartbeat) {
	r.object([]string{"last_beat", "interval"}, func(k string) {
		if k == "last_beat" {
			h.LastBeat = r.time()
			return
		}
		start := r.i
		r.str()
		if r.ok && h.Interval.UnmarshalJSON(r.b[start:r.i]) != nil {
			r.ok = false
		}
	})
}

var codeFields = []string{"root", "host", "branch", "head", "upstream", "ahead", "behind", "uncommitted", "untracked", "at"}

func (r *jsonReader) code() *CodeState {
	c := &CodeState{}
	r.object(codeFields, func(k string) {
		switch k {
		case "root":
			c.Root = r.str()
		case "host":
			c.Host = r.str()
		case "branch":
			c.Branch = r.str()
		case "head":
			c.Head = r.str()
		case "upstream":
			c.Upstream = r.str()
		case "ahead":
			c.Ahead = r.intv()
		case "behind":
			c.Behind = r.intv()
		case "uncommitted":
			c.Uncommitted = r.intv()
		case "untracked":
			c.Untracked = r.intv()
		default:
			c.At = r.time()
		}
	})
	return c
}
