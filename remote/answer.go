package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// answerDecoder is an answer that reads itself from the server's bytes
// (instead of encoding/json's reflection).
type answerDecoder interface {
	decodeAnswer(data []byte) error
}

// appendAnswer is the answer to an append, its state (the largest part)
// read by the generated codec of package wire.
type appendAnswer struct {
	httpapi.AppendResult
}

func (a *appendAnswer) decodeAnswer(data []byte) error {
	data = bytes.TrimRight(data, " \t\r\n")
	if res, ok := readServersAnswer(data); ok {
		a.AppendResult = res
		return nil
	}
	m, ok := wire.Members(data, "state", "event", "replayed", "warnings")
	if !ok {
		// Not in the form the server writes (another server, a proxy
		// that re-encodes): encoding/json reads any form.
		return json.Unmarshal(data, &a.AppendResult)
	}
	a.AppendResult = httpapi.AppendResult{}
	if st := m[0]; st != nil && !bytes.Equal(st, []byte("null")) {
		a.State = new(ckpt.Checkpoint)
		if err := wire.Unmarshal(st, a.State); err != nil {
			return err
		}
	}
	// The event with its sum, as the server writes it, goes through the
	// codec too (wire.ReadSummed); another form to encoding/json.
	if ev := m[1]; ev != nil {
		if e, sum, ok := wire.ReadSummed(ev); ok {
			a.Event = httpapi.Event{Event: e, Sum: sum}
		} else if err := json.Unmarshal(ev, &a.Event); err != nil {
			return err
		}
	}
	if r := m[2]; r != nil && !bytes.Equal(r, []byte("false")) {
		if a.Replayed = bytes.Equal(r, []byte("true")); !a.Replayed {
			if err := json.Unmarshal(r, &a.Replayed); err != nil {
				return err
			}
		}
	}
	if w := m[3]; w != nil {
		return json.Unmarshal(w, &a.Warnings)
	}
	return nil
}

// readServersAnswer reads an answer in the form the server writes it,
// `{"state":S,"event":E}` with `,"replayed":true` before the brace when
// replayed, in one pass: the state by the codec from where it starts, the
// event (with its sum) by wire.ReadSummed. ok is false for any other form
// (warnings among them), which decodeAnswer reads member by member.
func readServersAnswer(data []byte) (res httpapi.AppendResult, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"state":`))
	if !ok {
		return res, false
	}
	if after, null := bytes.CutPrefix(rest, []byte("null")); null {
		rest = after
	} else {
		st := new(ckpt.Checkpoint)
		n, ok := wire.DecodePrefix(rest, st)
		if !ok {
			return res, false
		}
		res.State, rest = st, rest[n:]
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"event":`)); !ok {
		return res, false
	}
	if rest, ok = bytes.CutSuffix(rest, []byte("}")); !ok {
		return res, false
	}
	// What is left is the event, unless more members follow it: then it
	// is no one object, and ReadSummed refuses it.
	rest, res.Replayed = bytes.CutSuffix(rest, []byte(`,"replayed":true`))
	e, sum, ok := wire.ReadSummed(rest)
	if !ok {
		return res, false
	}
	res.Event = httpapi.Event{Event: e, Sum: sum}
	return res, true
}

type minimalKey struct{}

// WithoutState returns ctx under which an Append asks the server to leave
// the checkpoint's state out of its answer (Prefer: return=minimal): the
// server then encodes, and this client decodes, only the stored event.
// The AppendResult of such an append has a nil State; its Event.Seq is the
// checkpoint's new revision. For writers that do not read the state back
// (hooks, beats of progress, bulk imports); a server that does not know
// the preference answers with the state as before.
func WithoutState(ctx context.Context) context.Context {
	return context.WithValue(ctx, minimalKey{}, true)
}

func withoutState(ctx context.Context) bool {
	v, _ := ctx.Value(minimalKey{}).(bool)
	return v
}

// bodyEncoder is a request body that writes itself (instead of
// encoding/json's reflection).
type bodyEncoder interface {
	encodeBody() ([]byte, error)
}

// eventBody is an append's body: json.Marshal(httpapi.Event)'s bytes, the
// event written by the generated codec.
type eventBody httpapi.Event

func (e eventBody) encodeBody() ([]byte, error) {
	b, err := wire.Append(make([]byte, 0, 256+len(e.Data)), &e.Event)
	if err != nil || e.Sum == "" {
		return b, err
	}
	// The embedded event's members come first, then the wire event's sum.
	sum, err := json.Marshal(e.Sum)
	if err != nil {
		return nil, err
	}
	return append(append(append(b[:len(b)-1], `,"sum":`...), sum...), '}'), nil
}

// maxAnswer bounds an answer's body.
const maxAnswer = 64 << 20

// answerBufs are the buffers answers are read into, kept between calls;
// one grown past maxPooledAnswer (a long listing, a large state) is left
// to the collector.
var answerBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledAnswer = 256 << 10

func putAnswerBuf(b *[]byte) {
	if cap(*b) <= maxPooledAnswer {
		*b = (*b)[:0]
		answerBufs.Put(b)
	}
}

// readAnswer appends resp's body, at most maxAnswer bytes, to dst, grown
// once to the body's announced length.
func readAnswer(dst []byte, resp *http.Response) ([]byte, error) {
	if n := resp.ContentLength; n > 0 && n <= maxAnswer {
		dst = slices.Grow(dst, int(n)+1) // +1: the read that finds the end
	}
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := resp.Body.Read(dst[len(dst):min(cap(dst), maxAnswer)])
		dst = dst[:len(dst)+n]
		if err == io.EOF || len(dst) == maxAnswer {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
