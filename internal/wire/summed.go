package wire

import (
	"bytes"

	"github.com/ckpt-dev/ckpt"
)

// ReadSummed reads data, one event as ckpt serve's API carries it (a
// ckpt.Event's members, then optionally its "sum" as the last member, the
// JSON of httpapi.Event), with the generated codec: it returns what
// json.Unmarshal reads into that type, the event and its sum, with ok
// true. The codec reads only the form json.Marshal writes: every key one
// of ckpt.Event's, spelled exactly, so none that encoding/json would match
// to the sum but the plain last member. ok is false for anything else
// (another form, escapes in a key, a value the codec refuses): decode such
// data with encoding/json, which also words the error of bad JSON.
func ReadSummed(data []byte) (e ckpt.Event, sum string, ok bool) {
	if len(data) == 0 || data[0] != '{' {
		return ckpt.Event{}, "", false
	}
	body := data
	if s, rest, found := cutSum(data); found {
		sum, body = s, rest
	}
	r := reader{b: body, ok: true}
	if !r.readAny(&e) || !r.ok || r.i != len(body) {
		return ckpt.Event{}, "", false
	}
	return e, sum, true
}

// cutSum splits data ending in `,"sum":"S"}`, with S plain printable
// ASCII (no escapes: a sum is hex), into S and the object without that
// member. found is false for any other form.
func cutSum(data []byte) (sum string, rest []byte, found bool) {
	const key = `,"sum":"`
	if len(data) < len(key)+3 || data[len(data)-1] != '}' || data[len(data)-2] != '"' {
		return "", nil, false
	}
	inner := data[:len(data)-2]
	i := bytes.LastIndex(inner, []byte(key))
	if i <= 1 || data[i-1] == '{' {
		// `{,"sum":…}` is no object; encoding/json refuses it.
		return "", nil, false
	}
	s := inner[i+len(key):]
	for _, c := range s {
		if c < ' ' || c > '~' || c == '"' || c == '\\' {
			return "", nil, false
		}
	}
	// The codec reads the members before the sum; the copy ends the
	// object there (data itself is the caller's, never written).
	rest = append(data[:i:i], '}')
	return string(s), rest, true
}
