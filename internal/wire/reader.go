package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// reader reads JSON of the one form json.Marshal writes (members in
// declaration order, each once, no spaces); ok turns false at anything
// else, which is then left to encoding/json. The generated code
// (codec_*gen.go) reads each type with these.
type reader struct {
	b  []byte
	i  int
	ok bool
}

// fail leaves the whole input to encoding/json.
//
//lint:ignore U1000 called by generated code for a field it cannot read
func (r *reader) fail() { r.ok = false }

// null reads a null if one is next.
func (r *reader) null() bool { return r.has("null") }

// object reads an object whose keys are among fields, in their order
// (json.Marshal's), each once; member reads the value of each.
func (r *reader) object(fields []string, member func(key string)) {
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
func (r *reader) plainKey() []byte {
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

func (r *reader) key() string {
	k := r.str()
	r.lit(":")
	return k
}

func (r *reader) lit(s string) bool {
	if r.ok && len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	r.ok = false
	return false
}

func (r *reader) has(s string) bool {
	if r.ok && len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

// str reads a string: valid UTF-8, escapes but surrogates.
func (r *reader) str() string {
	raw, plain := r.strBytes()
	switch {
	case !r.ok:
		return ""
	case plain:
		return string(raw)
	}
	return r.unescape(raw)
}

// skipStr reads a string as str does, refusing what str refuses, without
// making it (a value read only to be checked or kept raw).
func (r *reader) skipStr() {
	raw, plain := r.strBytes()
	for !plain && r.ok {
		j := bytes.IndexByte(raw, '\\')
		if j < 0 {
			return
		}
		_, n, ok := escape(raw[j+1:])
		r.ok = ok
		raw = raw[j+1+n:]
	}
}

// strBytes reads a string's bytes between its quotes, valid UTF-8 without
// control characters; plain reports that they hold no escape.
func (r *reader) strBytes() (raw []byte, plain bool) {
	if !r.lit(`"`) {
		return nil, false
	}
	start, plain := r.i, true
	for ; r.i < len(r.b); r.i++ {
		for r.i+8 <= len(r.b) && quietWord(binary.LittleEndian.Uint64(r.b[r.i:])) {
			r.i += 8
		}
		if r.i == len(r.b) {
			break
		}
		c := r.b[r.i]
		switch {
		case c == '"':
			raw := r.b[start:r.i]
			r.i++
			if !utf8.Valid(raw) {
				r.ok = false
				return nil, false
			}
			return raw, plain
		case c == '\\':
			plain = false
			r.i++
		case c < ' ':
			r.ok = false
			return nil, false
		}
	}
	r.ok = false
	return nil, false
}

// unescape returns raw, a string's bytes holding escapes, unescaped: the
// runs between escapes are copied whole, into one allocation (the result
// is never longer than raw). A one-letter escape is read from a table:
// notes of short lines hold one every few bytes.
func (r *reader) unescape(raw []byte) string {
	var out strings.Builder
	out.Grow(len(raw))
	for {
		j := bytes.IndexByte(raw, '\\')
		if j < 0 {
			out.Write(raw)
			return out.String()
		}
		out.Write(raw[:j])
		if j+1 < len(raw) && shortEscape[raw[j+1]] != 0 {
			out.WriteByte(shortEscape[raw[j+1]])
			raw = raw[j+2:]
			continue
		}
		c, n, ok := escape(raw[j+1:])
		if !ok {
			r.ok = false
			return ""
		}
		out.WriteRune(c)
		raw = raw[j+1+n:]
	}
}

// shortEscape maps the letter of each one-letter JSON escape to what it
// stands for (0: not one).
var shortEscape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escape decodes the escape that raw starts with (the bytes after its
// backslash): the character and how many bytes it took. ok is false for
// one JSON does not have, and for a surrogate (left to encoding/json).
func escape(raw []byte) (c rune, n int, ok bool) {
	if len(raw) == 0 {
		return 0, 0, false
	}
	switch raw[0] {
	case '"', '\\', '/':
		return rune(raw[0]), 1, true
	case 'b':
		return '\b', 1, true
	case 'f':
		return '\f', 1, true
	case 'n':
		return '\n', 1, true
	case 'r':
		return '\r', 1, true
	case 't':
		return '\t', 1, true
	case 'u':
		if len(raw) < 5 {
			return 0, 0, false
		}
		v, err := strconv.ParseUint(string(raw[1:5]), 16, 16)
		if err != nil || (v >= 0xd800 && v < 0xe000) {
			return 0, 0, false
		}
		return rune(v), 5, true
	}
	return 0, 0, false
}

// digits reads a JSON number's bytes: -?(0|[1-9][0-9]*) and, if frac,
// (.[0-9]+)?([eE][+-]?[0-9]+)?.
func (r *reader) digits(frac bool) string {
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

// intBits reads an integer that fits in a signed integer of bits bits
// (json.Unmarshal refuses any other).
func (r *reader) intBits(bits int) int64 {
	s := r.digits(false)
	if !r.ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		r.ok = false
	}
	return n
}

// uintBits reads an integer that fits in an unsigned integer of bits bits.
//
//lint:ignore U1000 called by generated code for an unsigned field
func (r *reader) uintBits(bits int) uint64 {
	s := r.digits(false)
	if !r.ok {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		r.ok = false
	}
	return n
}

// unmarshaler hands the next value's bytes to an UnmarshalJSON method, as
// encoding/json does.
func (r *reader) unmarshaler(u json.Unmarshaler) {
	v := r.value(0)
	if r.ok && u.UnmarshalJSON(v) != nil {
		r.ok = false
	}
}

// rawValue reads the next value as a json.RawMessage (a copy).
func (r *reader) rawValue() json.RawMessage {
	return json.RawMessage(append([]byte(nil), r.value(0)...))
}

func (r *reader) float() float64 {
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

func (r *reader) bool() bool {
	if r.has("true") {
		return true
	}
	r.lit("false")
	return false
}

// time reads a time as time.Time's UnmarshalJSON does, on the same bytes.
func (r *reader) time() time.Time {
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

func (r *reader) array(elem func()) {
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
func (r *reader) value(depth int) []byte {
	start := r.i
	if depth > 100 || r.i >= len(r.b) {
		r.ok = false
		return nil
	}
	switch c := r.b[r.i]; {
	case c == '"':
		r.skipStr()
	case c == '{':
		r.i++
		if !r.has("}") {
			for r.ok {
				r.skipStr()
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

// mapOf reads an object of any keys, each value read by value.
func (r *reader) mapOf(value func(key string)) {
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
