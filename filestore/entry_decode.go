package filestore

import (
	"bytes"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// decodeEntry reads a journal line in the form appendEntry writes it
// ({"kind":…,"id":…,"rev":…[,"type":…],"at":…[,"sum":…][,"size":…][,"summary":…]},
// strings without escapes, the summary last and read by wire.Unmarshal)
// as json.Unmarshal would, without encoding/json's scan of the whole
// line: a listing resolves every journal line after the index. false
// means "not that form" (not necessarily invalid): the caller decodes it
// with encoding/json (FuzzDecodeEntry holds the two equal).
func decodeEntry(line []byte) (jentry, bool) {
	e, sum, ok := decodeEnvelope(line)
	if !ok || sum == nil {
		return e, ok
	}
	e.Summary = new(ckpt.Summary)
	if wire.Unmarshal(sum, e.Summary) != nil {
		return e, false
	}
	return e, true
}

// decodeEnvelope is decodeEntry without the summary's decode: it returns
// the summary's bytes (nil when the line has none).
func decodeEnvelope(line []byte) (jentry, []byte, bool) {
	var e jentry
	r := presenceReader{b: line, ok: true}
	r.lit(`{"kind":`)
	e.Kind = ckpt.ChangeKind(r.str())
	if !r.key("id") {
		return e, nil, false
	}
	e.ID = r.str()
	if !r.key("rev") {
		return e, nil, false
	}
	e.Rev = int64(r.int())
	if r.key("type") {
		e.Type = ckpt.EventType(r.str())
	}
	if e.At = r.time("at"); e.At.IsZero() {
		return e, nil, false
	}
	if r.key("sum") {
		e.Sum = r.str()
	}
	if r.key("size") {
		e.Size = int64(r.int())
	}
	if !r.ok {
		return e, nil, false
	}
	rest := line[r.pos:]
	if string(rest) == "}" {
		return e, nil, true
	}
	if !r.key("summary") || line[len(line)-1] != '}' {
		return e, nil, false
	}
	sum := line[r.pos : len(line)-1]
	if len(sum) == 0 || sum[0] != '{' || bytes.Equal(sum, []byte("null")) {
		return e, nil, false
	}
	return e, sum, true
}
