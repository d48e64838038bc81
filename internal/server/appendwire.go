package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// The append's hot path reads its body and writes its answer with the
// generated codec (package wire) instead of encoding/json's reflection:
// the bytes and the errors are encoding/json's, only the CPU differs.

// decodeEvent reads an append's body into in as readJSON does (same
// values, same refusals). A body the codec reads whole goes through it;
// one that might name the wire event's "sum" (which the codec's
// ckpt.Event has no field for, and encoding/json matches by case folding
// and escapes) or that it cannot read goes to decodeBody, for
// decodeBody's words.
func decodeEvent(body []byte, in *httpapi.Event) error {
	if len(body) > 0 && body[0] == '{' && !mayNameSum(body) && utf8.Valid(body) {
		var e ckpt.Event
		if wire.Unmarshal(body, &e) == nil {
			*in = httpapi.Event{Event: e}
			return nil
		}
	}
	*in = httpapi.Event{}
	return decodeBody(body, in)
}

// mayNameSum reports whether body may hold a key encoding/json matches to
// "sum": one ending in `um"` in any case, or one spelled with \u escapes.
func mayNameSum(body []byte) bool {
	for i := 0; i+2 < len(body); i++ {
		switch {
		case body[i] == '\\' && body[i+1] == 'u':
			return true
		case body[i]|0x20 == 'u' && body[i+1]|0x20 == 'm' && body[i+2] == '"':
			return true
		}
	}
	return false
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

// appendAnswer returns json.Marshal(res)'s bytes, the state and the event
// written by the generated codec.
func appendAnswer(res httpapi.AppendResult) ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, `{"state":`...)
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
