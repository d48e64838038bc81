package feed

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Frame encodes one server-sent event: its id (none when ""), its type
// (the default "message" when "") and its data, one data line per line of
// data. An id with a line break cannot travel and is left out.
func Frame(id, event string, data []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(data) + len(id) + len(event) + 24)
	if id != "" && !strings.ContainsAny(id, "\r\n") {
		b.WriteString("id: ")
		b.WriteString(id)
		b.WriteByte('\n')
	}
	if event != "" {
		b.WriteString("event: ")
		b.WriteString(event)
		b.WriteByte('\n')
	}
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		b.WriteString("data: ")
		b.Write(bytes.TrimSuffix(line, []byte{'\r'}))
		b.WriteByte('\n')
		if !more {
			break
		}
		data = rest
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// IDOnly encodes an event that only moves the client's last event id to
// cursor: a browser's EventSource and Read take the id and dispatch
// nothing. A stream sends one after changes it filtered out, so a
// reconnect resumes after them rather than before.
func IDOnly(cursor string) []byte {
	if cursor == "" || strings.ContainsAny(cursor, "\r\n") {
		return nil
	}
	return []byte("id: " + cursor + "\n\n")
}

// Writer writes one server-sent event stream, each write flushed. It is
// safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  http.ResponseWriter
	rc *http.ResponseController
}

// Start answers r with an event stream: the headers (no caching, no proxy
// buffering), 200, a retry hint for the browser's reconnects (none when
// 0) and a first comment, flushed. The stream outlives the server's write
// timeout by design.
func Start(w http.ResponseWriter, retry time.Duration, comment string) (*Writer, error) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	s := &Writer{w: w, rc: rc}
	var b []byte
	if retry > 0 {
		b = append(b, "retry: "...)
		b = append(b, []byte(itoa(retry.Milliseconds()))...)
		b = append(b, '\n')
	}
	b = append(b, ": "...)
	b = append(b, strings.NewReplacer("\r", " ", "\n", " ").Replace(comment)...)
	b = append(b, "\n\n"...)
	return s, s.Write(b)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var d [20]byte
	i := len(d)
	for ; n > 0; n /= 10 {
		i--
		d[i] = byte('0' + n%10)
	}
	return string(d[i:])
}

// Write writes encoded events (Frame, IDOnly) and flushes them.
func (s *Writer) Write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// keptBuffer is the largest encoding buffer a stream keeps for its next
// batch: a usual batch's fits, and a burst's piece (MaxDeliver changes)
// of dashboard rows; a larger one goes back to the garbage collector.
const keptBuffer = 128 << 10

// Stream is one client's stream of the hub's feed.
type Stream struct {
	Hub  *Hub
	From string // the cursor to resume after (see Hub.Follow)
	// Encode appends to dst the bytes to send for a batch of changes (the
	// events of the changes this client may see, and IDOnly of the last
	// change when that one is filtered out) and returns the result;
	// nothing appended sends nothing. The stream reuses the result's
	// memory as the next batch's dst once it is written, so a stream
	// allocates no buffer per batch (with hundreds of streams, the
	// batches' buffers were most of a server's garbage).
	Encode func(dst []byte, items []*Item) []byte
	// Keepalive is how often an idle stream sends a comment, so proxies
	// and clients see the connection alive.
	Keepalive time.Duration
	// Other carries events of the stream's own (already encoded) to
	// interleave with the changes; nil for none.
	Other <-chan []byte
	// Last, when the stream ends for any reason but its client leaving,
	// encodes the event that says why (nil: none). Ending by ctx with a
	// cause (a revoked token) passes that cause.
	Last func(err error) []byte
}

// Run writes the stream on w until ctx ends (its cause, unless the client
// left, goes to Last), the feed fails or cuts the stream off, or a write
// fails. It returns why the stream ended.
func (s Stream) Run(ctx context.Context, w *Writer) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		// The stream's own goroutine encodes and writes each batch (w is
		// safe for concurrent use): no hand-off per batch to Run's.
		var buf []byte
		done <- s.Hub.Follow(ctx, s.From, func(items []*Item) error {
			buf = s.Encode(buf[:0], items)
			err := w.Write(buf)
			if cap(buf) > keptBuffer {
				buf = nil // a burst's buffer is not kept for the quiet after it
			}
			return err
		})
	}()
	keep := time.NewTicker(s.Keepalive)
	defer keep.Stop()
	var err error
	for err == nil {
		select {
		case b := <-s.Other:
			err = w.Write(b)
		case <-keep.C:
			err = w.Write([]byte(": keepalive\n\n"))
		case err = <-done:
			if ctx.Err() != nil {
				err = context.Cause(ctx) // a revoked token, or the client left
			} else if err == nil {
				err = context.Canceled
			}
			s.last(w, err)
			return err
		case <-ctx.Done():
			err = context.Cause(ctx)
			if !errors.Is(err, context.Canceled) {
				s.last(w, err) // a cause of the server's: a revoked token
			}
		}
	}
	cancel(err)
	<-done
	return err
}

func (s Stream) last(w *Writer, err error) {
	if s.Last != nil && !errors.Is(err, context.Canceled) {
		_ = w.Write(s.Last(err))
	}
}
