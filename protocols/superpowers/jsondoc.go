package superpowers

// jsondoc.go is the small JSON-document toolkit of the seed adapters. The
// same file (only the package clause differs) lives in protocols/superpowers,
// protocols/ccc, protocols/agentcheckpoints and protocols/sitebuilder;
// TestJSONDocCopiesIdentical in agentcheckpoints keeps the copies equal.
//
// It gives ordered JSON objects (seed files are read by people and kept in
// git, so keys keep their order), a three-way merge that lets an export keep
// every field and every spelling of the file it was imported from, lenient
// timestamps, and the progress arithmetic of ckpt's fold.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// object is a JSON object that remembers the order of its keys. Values are
// kept as the raw bytes read, so a value written back is the value read.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func newObject() *object { return &object{vals: map[string]json.RawMessage{}} }

var errNotObject = errors.New("not a JSON object")

// parseObject reads one JSON object. A repeated key keeps its first position
// and its last value, as encoding/json does.
func parseObject(data []byte) (*object, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	o := newObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntax(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonSyntax(err)
		}
		o.set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// maxDepth bounds how deeply a seed file may nest: the documents nest four
// levels; a file nested hundreds deep is not one, and would make an indented
// export grow with the square of its depth.
const maxDepth = 64

func checkDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxDepth {
				return fmt.Errorf("JSON nested more than %d levels deep: not a seed checkpoint file", maxDepth)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

func jsonSyntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: the file ends early")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func (o *object) get(k string) json.RawMessage { return o.vals[k] }

func (o *object) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *object) set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// put sets k to the JSON encoding of v.
func (o *object) put(k string, v any) { o.set(k, rawJSON(v)) }

func (o *object) del(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// raw returns o as compact JSON.
func (o *object) raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(rawJSON(k))
		b.WriteByte(':')
		if err := json.Compact(&b, o.vals[k]); err != nil {
			b.Write(o.vals[k]) // values come from a decoder or rawJSON: valid
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// indented returns o as the bytes of a file: two-space indentation and a
// final newline.
func (o *object) indented() []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.raw(), "", "  "); err != nil {
		panic(fmt.Sprintf("indenting JSON built from valid values: %v", err))
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// rawJSON encodes v without HTML escaping (seed files are not HTML).
func rawJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("encoding %T: %v", v, err)) // only plain values are encoded
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// asObject parses v when it is a JSON object.
func asObject(v json.RawMessage) (*object, bool) {
	if len(v) == 0 {
		return nil, false
	}
	o, err := parseObject(v)
	return o, err == nil
}

// equalJSON reports whether a and b hold the same JSON value: key order,
// spacing and number spelling (1 or 1.0) do not matter. A nil value is an
// absent one and equals only another absent one.
func equalJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, erra := decodeAny(a)
	vb, errb := decodeAny(b)
	if erra != nil || errb != nil {
		return bytes.Equal(a, b)
	}
	return sameValue(va, vb)
}

func decodeAny(v json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	err := dec.Decode(&x)
	return x, err
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && sameNumber(x, y)
	default:
		return a == b
	}
}

// sameNumber compares two JSON numbers by value: whole numbers exactly
// (up to 400 digits), others as float64. It never builds a huge number from
// an exponent such as 1e999999999.
func sameNumber(x, y json.Number) bool {
	if x == y {
		return true
	}
	if wholeNumber(x) && wholeNumber(y) {
		bx, okx := new(big.Int).SetString(string(x), 10)
		by, oky := new(big.Int).SetString(string(y), 10)
		return okx && oky && bx.Cmp(by) == 0
	}
	fx, errx := strconv.ParseFloat(string(x), 64)
	fy, erry := strconv.ParseFloat(string(y), 64)
	return errx == nil && erry == nil && fx == fy
}

func wholeNumber(n json.Number) bool {
	s := strings.TrimPrefix(string(n), "-")
	return len(s) > 0 && len(s) <= 400 && strings.Trim(s, "0123456789") == ""
}

// merge3 returns the value to write for one field. base is what ckpt's
// rendering of the imported file gave, ours is its rendering of the state
// now, theirs is the file's own value (nil: absent). Where the state did not
// change a field (ours equals base), the file's value and spelling win, so
// fields ckpt does not model and values ckpt would spell differently
// ("PAUSED", "N/A (paused)", a string where an array was promised) survive.
// Where the state changed it, ckpt's value wins, merged key by key inside
// objects and by "id" inside arrays of objects, so unknown fields nested in
// a changed object survive too.
func merge3(base, ours, theirs json.RawMessage) json.RawMessage {
	if equalJSON(base, ours) {
		return theirs
	}
	if ours == nil {
		return nil
	}
	if oo, ok := asObject(ours); ok {
		if ot, ok := asObject(theirs); ok {
			ob, ok := asObject(base)
			if !ok {
				ob = newObject()
			}
			out := newObject()
			for _, k := range ot.keys {
				if v := merge3(ob.get(k), oo.get(k), ot.get(k)); v != nil {
					out.set(k, v)
				}
			}
			for _, k := range oo.keys {
				if !ot.has(k) {
					if v := merge3(ob.get(k), oo.get(k), nil); v != nil {
						out.set(k, v)
					}
				}
			}
			return out.raw()
		}
	}
	if merged, ok := mergeByID(base, ours, theirs); ok {
		return merged
	}
	return ours
}

// mergeByID merges arrays whose elements are all objects with a string "id"
// (seed 003's subtask items): element by element, in ours' order, then the
// elements only theirs has and base never had.
func mergeByID(base, ours, theirs json.RawMessage) (json.RawMessage, bool) {
	oo, ok := idArray(ours)
	if !ok {
		return nil, false
	}
	ot, ok := idArray(theirs)
	if !ok {
		return nil, false
	}
	ob, _ := idArray(base)
	find := func(list []idElem, id string) json.RawMessage {
		for _, e := range list {
			if e.id == id {
				return e.raw
			}
		}
		return nil
	}
	var out []json.RawMessage
	for _, e := range oo {
		if t := find(ot, e.id); t != nil {
			out = append(out, merge3(find(ob, e.id), e.raw, t))
		} else {
			out = append(out, e.raw)
		}
	}
	for _, e := range ot {
		if find(oo, e.id) == nil && find(ob, e.id) == nil {
			out = append(out, e.raw)
		}
	}
	if out == nil {
		out = []json.RawMessage{}
	}
	return rawJSON(out), true
}

type idElem struct {
	id  string
	raw json.RawMessage
}

func idArray(v json.RawMessage) ([]idElem, bool) {
	var list []json.RawMessage
	if len(v) == 0 || json.Unmarshal(v, &list) != nil || list == nil {
		return nil, false
	}
	out := make([]idElem, 0, len(list))
	for _, e := range list {
		o, ok := asObject(e)
		if !ok {
			return nil, false
		}
		var id string
		if json.Unmarshal(o.get("id"), &id) != nil || id == "" {
			return nil, false
		}
		out = append(out, idElem{id, e})
	}
	return out, true
}

// mergeDocument returns the file to write: theirs changed by the edits that
// turn base into ours (see merge3).
func mergeDocument(base, ours, theirs *object) *object {
	merged, _ := asObject(merge3(base.raw(), ours.raw(), theirs.raw()))
	if merged == nil {
		return newObject()
	}
	return merged
}

// timeLayouts are the timestamp spellings read, most exact first; the
// second field says what reading it had to assume.
var timeLayouts = []struct {
	layout string
	guess  string
}{
	{time.RFC3339Nano, ""},
	{"2006-01-02T15:04:05", "no time zone, UTC assumed"},
	{"2006-01-02 15:04:05", "no time zone, UTC assumed"},
	{"2006-01-02T15:04", "no time zone, UTC assumed"},
	{"2006-01-02 15:04", "no time zone, UTC assumed"},
	{"2006-01-02", "a date without a time, midnight UTC assumed"},
}

// parseTime reads a timestamp leniently. guess says what was assumed ("" for
// an exact RFC 3339 time); ok is false when s is not a timestamp at all.
func parseTime(s string) (t time.Time, guess string, ok bool) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l.layout, s); err == nil {
			return t.UTC(), l.guess, true
		}
	}
	return time.Time{}, "", false
}

// formatTime writes t in RFC 3339, UTC, with as many fractional digits as it
// has (none for a whole second).
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// deriveProgress sets c.Progress the way ckpt's fold does: from the steps
// when there are steps (done and skipped count as done), else from the
// explicit count, with the percentage rounded to one decimal.
func deriveProgress(c *ckpt.Checkpoint) {
	if len(c.Steps) > 0 {
		done := 0
		for _, s := range c.Steps {
			if s.Status.Finished() {
				done++
			}
		}
		c.Progress.Done, c.Progress.Total = done, len(c.Steps)
	}
	switch {
	case c.Progress.Total > 0:
		c.Progress.Percent = math.Round(float64(c.Progress.Done)/float64(c.Progress.Total)*1000) / 10
	case c.Status == ckpt.StatusDone:
		c.Progress.Percent = 100
	default:
		c.Progress.Percent = 0
	}
}

// metaSource is what an adapter keeps in Checkpoint.Meta under its format
// name: the file as read (as a JSON object) and the file's base name, so an
// export can merge with it and a mirror can write where it was read from.
type metaSource struct {
	File   string          `json:"file,omitempty"`
	Source json.RawMessage `json:"source,omitempty"`
}

// readMeta returns the metaSource kept under key, if any. An entry that is
// not a metaSource is an error that says how to clear it.
func readMeta(c *ckpt.Checkpoint, key string) (metaSource, *object, error) {
	var m metaSource
	raw, ok := c.Meta[key]
	if !ok {
		return m, nil, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, nil, fmt.Errorf("meta %q is not the %s file record ckpt keeps (%v): remove it with ckpt update %s --meta %s=null", key, key, err, c.ID, key)
	}
	if len(m.Source) == 0 {
		return m, nil, nil
	}
	src, err := parseObject(m.Source)
	if err != nil {
		return m, nil, fmt.Errorf("meta %q holds a source that is not a JSON object (%v): remove it with ckpt update %s --meta %s=null", key, err, c.ID, key)
	}
	return m, src, nil
}

// writeMeta keeps m in c.Meta under key.
func writeMeta(c *ckpt.Checkpoint, key string, m metaSource) {
	if c.Meta == nil {
		c.Meta = map[string]json.RawMessage{}
	}
	c.Meta[key] = rawJSON(m)
}

// notes collects an import's warnings: what was guessed, defaulted or kept
// aside, one line each, in the order met.
type notes []string

func (n *notes) add(format string, args ...any) { *n = append(*n, fmt.Sprintf(format, args...)) }

// fields reads the members of one object leniently: a value of another type
// than promised is converted where that is unambiguous, with a note, and
// skipped with a note where it is not.
type fields struct {
	o    *object
	n    *notes
	path string // prefix for notes, e.g. "loop_state."
}

func (f fields) name(k string) string { return f.path + k }

// str returns a string member; numbers and booleans are read as their text.
func (f fields) str(k string) (string, bool) {
	v := f.o.get(k)
	if v == nil {
		return "", false
	}
	x, err := decodeAny(v)
	if err != nil {
		return "", false
	}
	switch t := x.(type) {
	case nil:
		return "", false
	case string:
		return t, true
	case json.Number:
		f.n.add("%s is the number %s where text was expected: read as text", f.name(k), t)
		return string(t), true
	case bool:
		f.n.add("%s is %v where text was expected: read as text", f.name(k), t)
		return fmt.Sprint(t), true
	}
	f.n.add("%s is not text: kept as is, not read", f.name(k))
	return "", false
}

// strs returns a list of strings. A single string is read as a one-item list
// (none, when it says "none" or is empty), items that are not strings as their
// JSON text.
func (f fields) strs(k string) ([]string, bool) {
	v := f.o.get(k)
	if v == nil {
		return nil, false
	}
	x, err := decodeAny(v)
	if err != nil {
		return nil, false
	}
	switch t := x.(type) {
	case nil:
		return nil, false
	case string:
		if isNone(t) {
			f.n.add("%s is the text %q where a list was promised: read as an empty list", f.name(k), t)
			return []string{}, true
		}
		f.n.add("%s is text where a list was promised: read as a list of one", f.name(k))
		return []string{t}, true
	case []any:
		out := make([]string, 0, len(t))
		for i, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
				continue
			}
			if e == nil {
				f.n.add("%s[%d] is null: skipped", f.name(k), i)
				continue
			}
			f.n.add("%s[%d] is not text: read as its JSON", f.name(k), i)
			out = append(out, string(rawJSON(e)))
		}
		return out, true
	}
	f.n.add("%s is not a list: kept as is, not read", f.name(k))
	return nil, false
}

// isNone reports whether s says "nothing": "", "none", "n/a", "-", "—".
func isNone(s string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(s), ".()")) {
	case "", "none", "n/a", "na", "-", "—", "null", "nil":
		return true
	}
	return false
}

// boolean returns a boolean member; the text "true"/"false"/"yes"/"no" is
// read with a note.
func (f fields) boolean(k string) (bool, bool) {
	v := f.o.get(k)
	if v == nil {
		return false, false
	}
	x, err := decodeAny(v)
	if err != nil {
		return false, false
	}
	switch t := x.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "y":
			f.n.add("%s is the text %q: read as true", f.name(k), t)
			return true, true
		case "false", "no", "n":
			f.n.add("%s is the text %q: read as false", f.name(k), t)
			return false, true
		}
	case nil:
		return false, false
	}
	f.n.add("%s is not true or false: kept as is, not read", f.name(k))
	return false, false
}

// number returns a numeric member; numeric text is read with a note.
func (f fields) number(k string) (float64, bool) {
	v := f.o.get(k)
	if v == nil {
		return 0, false
	}
	x, err := decodeAny(v)
	if err != nil {
		return 0, false
	}
	switch t := x.(type) {
	case json.Number:
		n, err := t.Float64()
		if err == nil && !math.IsInf(n, 0) {
			return n, true
		}
	case string:
		var n float64
		if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimSpace(t), "%"), "%g", &n); err == nil && !math.IsInf(n, 0) && !math.IsNaN(n) {
			f.n.add("%s is the text %q: read as the number %g", f.name(k), t, n)
			return n, true
		}
	case nil:
		return 0, false
	}
	f.n.add("%s is not a number: kept as is, not read", f.name(k))
	return 0, false
}

// count returns a non-negative whole number member (at most 1e9).
func (f fields) count(k string) (int, bool) {
	n, ok := f.number(k)
	if !ok {
		return 0, false
	}
	if n < 0 || n > 1e9 || n != math.Trunc(n) {
		f.n.add("%s is %g, not a count: kept as is, not read", f.name(k), n)
		return 0, false
	}
	return int(n), true
}

// when returns a timestamp member, read leniently; a value that is not a
// time is noted and skipped.
func (f fields) when(k string) (time.Time, bool) {
	s, ok := f.str(k)
	if !ok {
		return time.Time{}, false
	}
	t, guess, ok := parseTime(s)
	if !ok {
		f.n.add("%s %q is not a time: kept as is, not read", f.name(k), s)
		return time.Time{}, false
	}
	if guess != "" {
		f.n.add("%s %q has %s", f.name(k), s, guess)
	}
	return t, true
}

// statusFromWord maps a seed status word onto a Status: by ckpt.ParseStatus
// when it knows the word, else by the word's parts (READY_FOR_SYNC waits,
// "Refinement - COMPLETE" is done, …). guessed is true when the word was not
// one ckpt.ParseStatus knows.
func statusFromWord(word string) (s ckpt.Status, guessed bool) {
	if s, err := ckpt.ParseStatus(word); err == nil {
		return s, false
	}
	w := strings.ToUpper(word)
	for _, r := range statusParts {
		for _, p := range r.parts {
			if strings.Contains(w, p) {
				return r.status, true
			}
		}
	}
	return ckpt.StatusInProgress, true
}

var statusParts = []struct {
	status ckpt.Status
	parts  []string
}{
	{ckpt.StatusAbandoned, []string{"ABORT", "CANCEL", "ABANDON"}},
	{ckpt.StatusFailed, []string{"FAIL", "ERROR", "CRASH"}},
	{ckpt.StatusBlocked, []string{"BLOCK"}},
	{ckpt.StatusWaiting, []string{"WAIT", "PAUS", "READY", "HOLD", "SYNC"}},
	{ckpt.StatusDone, []string{"COMPLETE", "DONE", "PASS", "FINISH", "APPROVED"}},
	{ckpt.StatusPending, []string{"NOT_STARTED", "NOT STARTED", "BACKLOG", "TODO", "PENDING", "IDLE", "QUEUE", "NEW"}},
	{ckpt.StatusInProgress, []string{"PROGRESS", "ACTIVE", "RUNNING", "START", "WORKING"}},
}

// stepIDs makes step IDs from step texts: lower case, runs of anything but
// letters and digits become '-', at most 60 bytes, a numbered suffix where
// two texts give the same ID.
type stepIDs map[string]bool

func (u stepIDs) make(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 60 {
				break
			}
			continue
		}
		dash = true
	}
	id := b.String()
	if id == "" {
		id = "step"
	}
	base := id
	for i := 2; u[id]; i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	u[id] = true
	return id
}
