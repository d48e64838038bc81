package filestore

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
)

// The beat file's presence record is read and written on every presence
// hook, each in a new process, where encoding/json's first use of a type
// (building its codec by reflection) costs more than the hook's whole file
// work. These functions handle the record's canonical form (exactly the
// bytes json.Marshal writes for a ckpt.Presence) by hand and report false
// for anything else, which then goes through encoding/json. FuzzPresenceCodec
// holds both to encoding/json's results.

// beatRecord is what a beat file holds: the time of the last beat (kept
// in the content, so that a store copied without its modification times,
// `cp -r`, keeps its agents' last-seen times) and the presence record.
type beatRecord struct {
	Seen time.Time `json:"seen,omitzero"`
	ckpt.Presence
}

// appendBeat appends json.Marshal(beatRecord{seen, p})'s bytes to b. It
// reports false, with b unchanged, when the record holds something it does
// not write by hand (characters JSON escapes, a year outside 0-9999).
func appendBeat(b []byte, seen time.Time, p ckpt.Presence) ([]byte, bool) {
	out := append(b, '{')
	sep := false
	field := func(name string) {
		if sep {
			out = append(out, ',')
		}
		sep = true
		out = append(out, '"')
		out = append(out, name...)
		out = append(out, '"', ':')
	}
	ok := true
	str := func(name, s string) {
		if s == "" {
			return
		}
		if !plainString(s) {
			ok = false
			return
		}
		field(name)
		out = append(out, '"')
		out = append(out, s...)
		out = append(out, '"')
	}
	tm := func(name string, t time.Time) {
		if t.IsZero() {
			return
		}
		if y := t.Year(); y < 0 || y > 9999 || !rfc3339Offset(t) {
			ok = false
			return
		}
		field(name)
		out = append(out, '"')
		out = t.AppendFormat(out, time.RFC3339Nano)
		out = append(out, '"')
	}
	tm("seen", seen)
	str("state", string(p.State))
	tm("since", p.Since)
	str("reason", p.Reason)
	str("for", p.For)
	tm("at", p.At)
	if pr := p.Process; pr != nil {
		field("process")
		ok = ok && plainString(pr.Host) && plainString(pr.Start)
		out = append(append(append(out, `{"host":"`...), pr.Host...), `","pid":`...)
		out = strconv.AppendInt(out, int64(pr.PID), 10)
		if pr.Start != "" {
			out = append(append(append(out, `,"start":"`...), pr.Start...), '"')
		}
		out = append(out, '}')
	}
	tm("bound", p.Bound)
	str("session", p.Session)
	if !ok {
		return b, false
	}
	return append(out, '}'), true
}

// rfc3339Offset reports whether RFC 3339 (and so time.Time's MarshalJSON)
// can express t's zone offset: whole minutes, under 24 hours.
func rfc3339Offset(t time.Time) bool {
	_, off := t.Zone()
	return off%60 == 0 && off > -24*3600 && off < 24*3600
}

// plainString reports whether json.Marshal writes s as itself between
// quotes: valid UTF-8 with no control characters, quotes, backslashes, HTML
// characters or line and paragraph separators (all of which it escapes).
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return false
			}
			i += size - 1
		}
	}
	return true
}

// presenceReader decodes the canonical form appendPresence writes.
type presenceReader struct {
	b   []byte
	pos int
	ok  bool
}

// decodeBeat reads a record in the canonical form; false means "not
// that form" (not necessarily invalid): the caller falls back to
// encoding/json. A record written before the beat time was kept (a plain
// presence record) reads with a zero seen.
func decodeBeat(b []byte) (time.Time, ckpt.Presence, bool) {
	r := presenceReader{b: b, ok: true}
	var p ckpt.Presence
	r.lit("{")
	seen := r.time("seen")
	if r.key("state") {
		p.State = ckpt.PresenceState(r.str())
	}
	p.Since = r.time("since")
	if r.key("reason") {
		p.Reason = r.str()
	}
	if r.key("for") {
		p.For = r.str()
	}
	p.At = r.time("at")
	if r.key("process") {
		var pr ckpt.Process
		r.lit(`{"host":`)
		pr.Host = r.str()
		r.lit(`,"pid":`)
		pr.PID = r.int()
		if r.key("start") {
			pr.Start = r.str()
		}
		r.lit("}")
		p.Process = &pr
	}
	p.Bound = r.time("bound")
	if r.key("session") {
		p.Session = r.str()
	}
	r.lit("}")
	if !r.ok || r.pos != len(r.b) {
		return time.Time{}, ckpt.Presence{}, false
	}
	return seen, p, true
}

// time reads the member name, a time, when it comes next.
func (r *presenceReader) time(name string) time.Time {
	if !r.key(name) {
		return time.Time{}
	}
	// The form Beat writes (UTC) without a string or a format.
	if q := bytes.IndexByte(r.b[min(r.pos+1, len(r.b)):], '"'); r.pos < len(r.b) && r.b[r.pos] == '"' && q >= 0 {
		if t, ok := parseUTCNano(r.b[r.pos+1 : r.pos+1+q]); ok {
			r.pos += q + 2
			return t
		}
	}
	s := r.str()
	t, err := time.Parse(time.RFC3339Nano, s)
	// Only a time that prints back as the same text: encoding/json's own
	// parse is stricter than time.Parse.
	if err != nil || t.Format(time.RFC3339Nano) != s || t.IsZero() {
		r.ok = false
		return time.Time{}
	}
	return t
}

func (r *presenceReader) lit(s string) {
	if !r.ok || len(r.b)-r.pos < len(s) || string(r.b[r.pos:r.pos+len(s)]) != s {
		r.ok = false
		return
	}
	r.pos += len(s)
}

// key consumes `"name":` (after a comma unless it is the object's first
// member) when it comes next.
func (r *presenceReader) key(name string) bool {
	if !r.ok {
		return false
	}
	at := r.pos
	if r.b[at-1] != '{' {
		if at >= len(r.b) || r.b[at] != ',' {
			return false
		}
		at++
	}
	want := `"` + name + `":`
	if len(r.b)-at < len(want) || string(r.b[at:at+len(want)]) != want {
		return false
	}
	r.pos = at + len(want)
	return true
}

// str reads a string with no escapes that json.Marshal would write as is.
func (r *presenceReader) str() string {
	r.lit(`"`)
	if !r.ok {
		return ""
	}
	start := r.pos
	for r.pos < len(r.b) && r.b[r.pos] != '"' {
		r.pos++
	}
	s := string(r.b[start:r.pos])
	if r.pos == len(r.b) || !plainString(s) {
		r.ok = false
		return ""
	}
	r.pos++
	return s
}

// int reads a decimal integer as json.Marshal writes an int.
func (r *presenceReader) int() int {
	start := r.pos
	if r.pos < len(r.b) && r.b[r.pos] == '-' {
		r.pos++
	}
	for r.pos < len(r.b) && r.b[r.pos] >= '0' && r.b[r.pos] <= '9' {
		r.pos++
	}
	digits := string(r.b[start:r.pos])
	n, err := strconv.Atoi(digits)
	if err != nil || strconv.Itoa(n) != digits {
		r.ok = false
	}
	return n
}
