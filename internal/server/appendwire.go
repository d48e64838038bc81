package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// The append's hot path reads its body and writes its answer with the
// generated codec (package wire) instead of encoding/json's reflection:
// the bytes and the errors are encoding/json's, only the CPU differs.

// decodeEvent reads an append's body into in as readJSON does (same
// values, same refusals). A body in the form the codec reads (json.Marshal's,
// which is what package remote sends) goes through it; any other, or one
// it cannot read, goes to decodeBody, for decodeBody's words.
func decodeEvent(body []byte, in *httpapi.Event) error {
	if utf8.Valid(body) {
		if e, sum, ok := wire.ReadSummed(body); ok {
			*in = httpapi.Event{Event: e, Sum: sum}
			return nil
		}
	}
	*in = httpapi.Event{}
	return decodeBody(body, in)
}

// PreferMinimal is the Prefer header value (RFC 7240) with which a client
// asks an append to answer without the checkpoint's state.
const preferMinimal = "return=minimal"

// wantsMinimal reports whether the request asks for return=minimal.
func wantsMinimal(r *http.Request) bool {
	for _, v := range r.Header.Values("Prefer") {
		for p := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), preferMinimal) {
				return true
			}
		}
	}
	return false
}

// appendAnswer appends json.Marshal(res)'s bytes and a newline (what
// json.Encoder writes) to dst, the state and the event written by the
// generated codec.
func appendAnswer(dst []byte, res httpapi.AppendResult) ([]byte, error) {
	b := append(dst, `{"state":`...)
	var err error
	if res.State == nil {
		b = append(b, "null"...)
	} else if b, err = wire.Append(b, res.State); err != nil {
		return nil, err
	}
	b = append(b, `,"event":`...)
	if b, err = wire.Append(b, &res.Event.Event); err != nil {
		return nil, err
	}
	if res.Event.Sum != "" {
		// An embedded struct's members come first in encoding/json's
		// order, then the wire event's own: sum goes before the brace.
		sum, err := json.Marshal(res.Event.Sum)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b[:len(b)-1], `,"sum":`...), sum...), '}')
	}
	if res.Replayed {
		b = append(b, `,"replayed":true`...)
	}
	if len(res.Warnings) > 0 {
		w, err := json.Marshal(res.Warnings)
		if err != nil {
			return nil, err
		}
		b = append(append(b, `,"warnings":`...), w...)
	}
	return append(b, "}\n"...), nil
}

// appendBufs are the append handler's buffers (its body, then its
// answer), kept between requests; one grown past maxPooledAppend (a very
// large state) is left to the collector.
var appendBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledAppend = 256 << 10

func putAppendBuf(b *[]byte) {
	if cap(*b) <= maxPooledAppend {
		*b = (*b)[:0]
		appendBufs.Put(b)
	}
}

// readAllTo is io.ReadAll appending to dst.
func readAllTo(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
