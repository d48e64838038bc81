package filestore

import (
	"bytes"
	"unicode/utf8"
	"unsafe"
)

// A summary as the index holds it is the JSON wire.Append wrote of a
// ckpt.Summary without liveness. `ckpt ls --json` prints each summary with
// its liveness; instead of decoding and encoding it again, a listing may
// copy the index's bytes with the liveness put into the heartbeat object
// (listjson.go), but only bytes that decoding and encoding would give back
// unchanged: canonSummary accepts exactly the members in their order,
// omitted as omitempty omits them, and values in the one form the encoder
// writes (strings with its escapes only, integers without a sign or
// leading zero, times in UTC with the fraction's trailing zeros cut).
// Anything else is decoded (the listing's path for a summary it cannot
// copy), so the bytes printed are the same either way (FuzzSpliceSummary
// holds the two to it).

// canonKind is the form of a member's value.
type canonKind uint8

const (
	cStr    canonKind = iota // a string
	cStrNE                   // an omitempty string: not ""
	cInt                     // an integer
	cIntNZ                   // an omitempty integer: not 0
	cFloat                   // a float64 (Progress.Percent)
	cTrue                    // an omitempty bool: true
	cTime                    // a time.Time
	cTimeNZ                  // an omitzero time: not the zero time
	cList                    // an omitempty []string: not empty
	cObj                     // an object of sub's members
	cHeart                   // the heartbeat without liveness: {} or {"interval":"…"}
)

// canonMember is one member of an object, in the encoder's order.
type canonMember struct {
	key  string // the member's key, quoted, with its colon: `"id":`
	kind canonKind
	req  bool // written whatever its value (no omitempty)
	sub  []canonMember
	span canonSpan // what canonSpans records of it
}

// canonSpan names a member canonSpans records.
type canonSpan uint8

const (
	spanNone canonSpan = iota
	spanID
	spanStatus
	spanArchived
	spanUpdated
	spanHeartbeat
)

var (
	canonAgent = []canonMember{
		{key: `"id":`, kind: cStrNE}, {key: `"type":`, kind: cStrNE}, {key: `"name":`, kind: cStrNE},
	}
	canonProgress = []canonMember{
		{key: `"done":`, kind: cInt, req: true}, {key: `"total":`, kind: cInt, req: true},
		{key: `"percent":`, kind: cFloat, req: true},
	}
	canonArchive = []canonMember{
		{key: `"reason":`, kind: cStr, req: true}, {key: `"at":`, kind: cTime, req: true},
		{key: `"from":`, kind: cStrNE},
	}
	// canonSummaryMembers are ckpt.Summary's members as wire writes them
	// (TestCanonMembersAreTheSummarys holds them to its field list).
	canonSummaryMembers = []canonMember{
		{key: `"id":`, kind: cStr, req: true, span: spanID},
		{key: `"rev":`, kind: cInt, req: true},
		{key: `"parent":`, kind: cStrNE},
		{key: `"labels":`, kind: cList},
		{key: `"agent":`, kind: cObj, req: true, sub: canonAgent},
		{key: `"session_id":`, kind: cStrNE},
		{key: `"title":`, kind: cStrNE},
		{key: `"task_id":`, kind: cStrNE},
		{key: `"stage":`, kind: cStrNE},
		{key: `"phase":`, kind: cStrNE},
		{key: `"status":`, kind: cStr, req: true, span: spanStatus},
		{key: `"status_reason":`, kind: cStrNE},
		{key: `"current_step":`, kind: cStrNE},
		{key: `"progress":`, kind: cObj, req: true, sub: canonProgress},
		{key: `"heartbeat":`, kind: cHeart, req: true, span: spanHeartbeat},
		{key: `"active_blockers":`, kind: cIntNZ},
		{key: `"blocking_errors":`, kind: cIntNZ},
		{key: `"blockers":`, kind: cList},
		{key: `"session_started_at":`, kind: cTimeNZ},
		{key: `"partial":`, kind: cTrue},
		{key: `"messages":`, kind: cIntNZ},
		{key: `"archived":`, kind: cObj, sub: canonArchive, span: spanArchived},
		{key: `"started_at":`, kind: cTime, req: true},
		{key: `"updated_at":`, kind: cTime, req: true, span: spanUpdated},
		{key: `"completed_at":`, kind: cTime},
	}
)

// canonSpans locates what a listing needs of a canonical summary: its ID,
// status and update time (string contents, without quotes; escapes left
// in), whether it is archived, and its heartbeat object ([hbStart, hbEnd)) with the
// interval's value (quotes included; nil when none).
type canonSpans struct {
	id, status       []byte
	updated          []byte // updated_at's time
	archived         bool
	hbStart, hbEnd   int
	interval         []byte
	idPlain, stPlain bool // id and status hold no escape
}

// canonReader walks one summary's bytes.
type canonReader struct {
	b  []byte
	i  int
	sp canonSpans
}

// canonSummary reports whether b is a summary in exactly the form wire
// writes, and where its parts are.
func canonSummary(b []byte) (canonSpans, bool) {
	r := canonReader{b: b}
	if !r.object(canonSummaryMembers) || r.i != len(b) {
		return canonSpans{}, false
	}
	return r.sp, true
}

// object reads an object of members, recording the spans they name.
func (r *canonReader) object(members []canonMember) bool {
	if !r.lit("{") {
		return false
	}
	if r.lit("}") {
		for k := range members {
			if members[k].req {
				return false
			}
		}
		return true
	}
	k := 0
	for {
		// The key, read once and matched against the members left (a
		// length differs from most at once).
		key, ok := r.key()
		if !ok {
			return false
		}
		for k < len(members) && members[k].key != key {
			if members[k].req {
				return false
			}
			k++
		}
		if k == len(members) {
			return false
		}
		m := &members[k]
		k++
		start := r.i
		if !r.value(m) {
			return false
		}
		r.record(m.span, start)
		if r.lit("}") {
			break
		}
		if !r.lit(",") {
			return false
		}
	}
	for ; k < len(members); k++ {
		if members[k].req {
			return false
		}
	}
	return true
}

// key reads a member's key with its colon (`"id":`), a key without
// escapes as the encoder writes them.
func (r *canonReader) key() (string, bool) {
	if r.i >= len(r.b) || r.b[r.i] != '"' {
		return "", false
	}
	end := bytes.IndexByte(r.b[r.i+1:], '"')
	if end < 0 || r.i+end+2 >= len(r.b) || r.b[r.i+end+2] != ':' {
		return "", false
	}
	key := r.b[r.i : r.i+end+3]
	r.i += end + 3
	return unsafe.String(unsafe.SliceData(key), len(key)), true
}

// record notes the span of a member's value that started at start.
func (r *canonReader) record(span canonSpan, start int) {
	switch span {
	case spanID:
		r.sp.id, r.sp.idPlain = r.b[start+1:r.i-1], noEscape(r.b[start+1:r.i-1])
	case spanStatus:
		r.sp.status, r.sp.stPlain = r.b[start+1:r.i-1], noEscape(r.b[start+1:r.i-1])
	case spanArchived:
		r.sp.archived = true
	case spanUpdated:
		r.sp.updated = r.b[start+1 : r.i-1]
	case spanHeartbeat:
		r.sp.hbStart, r.sp.hbEnd = start, r.i
	}
}

// value reads m's value.
func (r *canonReader) value(m *canonMember) bool {
	switch m.kind {
	case cStr, cStrNE:
		s, ok := r.str()
		return ok && (m.kind == cStr || len(s) > 0)
	case cInt, cIntNZ:
		n, ok := r.int()
		return ok && (m.kind == cInt || n != 0)
	case cFloat:
		return r.float()
	case cTrue:
		return r.lit("true")
	case cTime, cTimeNZ:
		// A time in the encoder's form holds nothing to escape: its
		// closing quote ends it, and canonTime checks every byte.
		if !r.lit(`"`) {
			return false
		}
		q := bytes.IndexByte(r.b[r.i:], '"')
		if q < 0 {
			return false
		}
		s := r.b[r.i : r.i+q]
		r.i += q + 1
		return canonTime(s) && (m.kind == cTime || string(s) != "0001-01-01T00:00:00Z")
	case cList:
		if !r.lit("[") {
			return false
		}
		for n := 0; ; n++ {
			if n > 0 && !r.lit(",") {
				return n > 0 && r.lit("]")
			}
			if _, ok := r.str(); !ok {
				return false
			}
		}
	case cObj:
		return r.object(m.sub)
	case cHeart:
		if r.lit("{}") {
			return true
		}
		if !r.lit(`{"interval":`) {
			return false
		}
		start := r.i
		if _, ok := r.str(); !ok {
			return false
		}
		r.sp.interval = r.b[start:r.i]
		return r.lit("}")
	}
	return false
}

// lit consumes s if b continues with it.
func (r *canonReader) lit(s string) bool {
	if len(r.b)-r.i < len(s) || string(r.b[r.i:r.i+len(s)]) != s {
		return false
	}
	r.i += len(s)
	return true
}

// str reads a string the encoder could have written (wire's writer.str)
// and returns its contents between the quotes.
func (r *canonReader) str() ([]byte, bool) {
	if !r.lit(`"`) {
		return nil, false
	}
	start := r.i
	for r.i < len(r.b) {
		for r.i < len(r.b) && plainByte[r.b[r.i]] {
			r.i++
		}
		if r.i == len(r.b) {
			break
		}
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			return r.b[start : r.i-1], true
		case c == '\\':
			n := canonEscape(r.b[r.i:])
			if n == 0 {
				return nil, false
			}
			r.i += n
		case c < ' ' || c == '<' || c == '>' || c == '&':
			return nil, false
		case c < utf8.RuneSelf:
			r.i++
		default:
			ru, size := utf8.DecodeRune(r.b[r.i:])
			if ru == utf8.RuneError && size == 1 || ru == '\u2028' || ru == '\u2029' {
				return nil, false // the encoder writes these escaped
			}
			r.i += size
		}
	}
	return nil, false
}

// plainByte marks the bytes the encoder writes as they are: printable
// ASCII but for '"', '\\', '<', '>' and '&'.
var plainByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// canonEscape returns the length of the escape at the start of b if it is
// one the encoder writes (for the one character it stands for), else 0.
func canonEscape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
	default:
		return 0
	}
	if len(b) < 6 {
		return 0
	}
	switch u := string(b[2:6]); u {
	case "003c", "003e", "0026", "2028", "2029":
		return 6
	default:
		// A control character without a short escape, in lower-case hex.
		if u[0] != '0' || u[1] != '0' || u[2] > '1' || u[2] < '0' || !lowerHex(u[3]) {
			return 0
		}
		switch c := hexVal(u[2])<<4 | hexVal(u[3]); c {
		case '\b', '\f', '\n', '\r', '\t':
			return 0
		}
		return 6
	}
}

func lowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// noEscape reports whether a string's contents hold no escape.
func noEscape(s []byte) bool {
	for _, c := range s {
		if c == '\\' {
			return false
		}
	}
	return true
}

// int reads an integer as strconv.AppendInt writes one, of at most 18
// digits (no overflow of an int64).
func (r *canonReader) int() (int64, bool) {
	neg := r.lit("-")
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	d := r.b[start:r.i]
	if len(d) == 0 || len(d) > 18 || len(d) > 1 && d[0] == '0' || neg && string(d) == "0" {
		return 0, false
	}
	var n int64
	for _, c := range d {
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// float reads a non-negative float64 as the encoder writes it, in the
// plain form of at most 15 significant digits (which every such decimal
// round-trips to): 0, 33.3, 100. Anything else (a sign, an exponent, more
// digits) is left to the decoder.
func (r *canonReader) float() bool {
	start := r.i
	for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
		r.i++
	}
	whole := r.b[start:r.i]
	if len(whole) == 0 || len(whole) > 1 && whole[0] == '0' {
		return false
	}
	var frac []byte
	if r.lit(".") {
		fs := r.i
		for r.i < len(r.b) && r.b[r.i] >= '0' && r.b[r.i] <= '9' {
			r.i++
		}
		frac = r.b[fs:r.i]
		if len(frac) == 0 || frac[len(frac)-1] == '0' {
			return false
		}
	}
	sig := len(whole) + len(frac)
	if whole[0] == '0' {
		// 0.000001 is the least written without an exponent.
		z := 0
		for z < len(frac) && frac[z] == '0' {
			z++
		}
		if z > 5 {
			return false
		}
		sig = len(frac) - z
	}
	return sig <= 15
}

// canonTime reports whether s is a time as the encoder writes one in UTC
// (time.RFC3339Nano: 2006-01-02T15:04:05.999999999Z, no trailing zeros in
// the fraction) and a real date.
func canonTime(s []byte) bool {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return false
	}
	num := decimal
	y, mo, d, h, mi, sec := num(s[0:4]), num(s[5:7]), num(s[8:10]), num(s[11:13]), num(s[14:16]), num(s[17:19])
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return false
	}
	frac := s[19 : len(s)-1]
	if len(frac) == 0 {
		return true
	}
	f := frac[1:]
	return frac[0] == '.' && len(f) >= 1 && len(f) <= 9 && num(f) >= 0 && f[len(f)-1] != '0'
}

// decimal returns the number b's digits write, or -1 if b holds another
// byte.
func decimal(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// daysIn is the number of days of month mo (1-12) of year y.
func daysIn(mo, y int) int {
	switch mo {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
