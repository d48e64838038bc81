package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// writer writes JSON as encoding/json does; ok turns false at the first
// value it leaves to encoding/json. The generated code (codec_*gen.go)
// writes each type with these.
type writer struct {
	b  []byte
	ok bool
}

// fail leaves the whole value to encoding/json.
//
//lint:ignore U1000 called by generated code for a field it cannot write
func (w *writer) fail() { w.ok = false }

func (w *writer) raw(s string) { w.b = append(w.b, s...) }

// close ends an object whose members start at n, each written with a
// leading comma: the first one's comma goes.
func (w *writer) close(n int, c byte) {
	if len(w.b) > n {
		w.b = append(w.b[:n], w.b[n+1:]...)
	}
	w.b = append(w.b, c)
}

func (w *writer) int(n int64) { w.b = strconv.AppendInt(w.b, n, 10) }

func (w *writer) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

//lint:ignore U1000 called by generated code for an unsigned field
func (w *writer) uint(n uint64) { w.b = strconv.AppendUint(w.b, n, 10) }

// sortedKeys returns m's keys in the order encoding/json writes them.
func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// marshaler writes the output of a MarshalJSON method as encoding/json
// does when it is compact printable ASCII without < > & (a Duration's
// string); any other output, and an error, is left to encoding/json.
func (w *writer) marshaler(b []byte, err error) {
	if err != nil {
		w.ok = false
		return
	}
	w.rawJSON(b)
}

const hexDigits = "0123456789abcdef"

// plainASCII holds the ASCII bytes json.Marshal writes as they are in a
// string (one table lookup per byte instead of six comparisons).
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// str writes s quoted and escaped as encoding/json does with HTML escaping
// on: invalid UTF-8 becomes \ufffd, U+2028 and U+2029 are escaped.
//
// Runs of plain bytes are read a byte at a time until one run was long
// (wordsAfter bytes): then each run is read eight bytes at a time first
// (plainPrefix). Notes of 100-byte lines encode about a sixth faster so,
// and notes of 8-byte lines, where words would cost more than they skip,
// as before (BenchmarkNotesJSON).
func (w *writer) str(s string) {
	w.b = append(w.b, '"')
	start, words := 0, false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				if words {
					i += plainPrefix(s[i:])
				} else {
					i++
				}
				continue
			}
			words = words || i-start >= wordsAfter
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
func (w *writer) float(f float64) {
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
func (w *writer) time(t time.Time) {
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

// rawJSON writes v as json.Marshal writes a json.RawMessage: compacted,
// with < > & and U+2028/U+2029 escaped. JSON that is compact already and
// holds none of those (what json.Marshal wrote: an event's payload, with
// spaces and any other text in its strings) is copied after a check (the
// reader takes no space between tokens, no control character and no
// invalid UTF-8); anything else goes through json.Compact and
// json.HTMLEscape (no reflection); invalid JSON is left to encoding/json
// (an error).
func (w *writer) rawJSON(v json.RawMessage) {
	if v == nil {
		w.raw(`null`)
		return
	}
	plain := true
	for i, c := range v {
		if c < ' ' || c == '<' || c == '>' || c == '&' ||
			c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xA8 || v[i+2] == 0xA9) { // U+2028, U+2029
			plain = false
			break
		}
	}
	if plain {
		if r := (reader{b: v, ok: true}); r.value(0) != nil && r.i == len(v) {
			w.b = append(w.b, v...)
			return
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, v); err != nil {
		w.ok = false
		return
	}
	out := bytes.NewBuffer(w.b)
	json.HTMLEscape(out, compact.Bytes())
	w.b = out.Bytes()
}
