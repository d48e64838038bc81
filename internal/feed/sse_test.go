package feed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/memstore"
)

// What Frame and IDOnly write, Read reads back: ids, types and data of
// several lines, the id persisting as the stream's last event id.
func TestFrameReadsBack(t *testing.T) {
	stream := string(Frame("7", "change", []byte(`{"a":1}`))) +
		": keepalive\n\n" +
		string(Frame("", "error", []byte("two\nlines"))) +
		string(IDOnly("9")) +
		string(Frame("bad\nid", "", []byte("x")))
	var got []string
	lines := 0
	err := Read(strings.NewReader(stream), func() { lines++ }, func(e Event) error {
		got = append(got, fmt.Sprintf("%s|%s|%s", e.ID, e.Type, e.Data))
		return nil
	})
	want := []string{`7|change|{"a":1}`, "7|error|two\nlines", "9||", "9||x"}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read %q (%v), want %q", got, err, want)
	}
	if lines != strings.Count(stream, "\n") {
		t.Errorf("line called %d times for %d lines", lines, strings.Count(stream, "\n"))
	}
}

// A stream's run ends with the cause of its context (a revoked token) as
// its last event, and sends the hub's changes as Encode makes them.
func TestStreamRunSendsChangesAndTheCauseItEndsWith(t *testing.T) {
	st := memstore.New()
	create(t, st, "a")
	h := New(st, 0, time.Millisecond)
	errRevoked := errors.New("revoked")
	ctx, cancel := context.WithCancelCause(context.Background())
	rec := httptest.NewRecorder()
	w, err := Start(rec, time.Second, "ckpt change feed")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	sent := make(chan struct{}, 10)
	go func() {
		done <- Stream{Hub: h, From: "1", Keepalive: time.Hour,
			Encode: func(b []byte, items []*Item) []byte {
				defer func() { sent <- struct{}{} }()
				for _, it := range items {
					b = append(b, Frame(it.Cursor, "change", []byte(it.ID))...)
				}
				return b
			},
			Last: func(err error) []byte { return Frame("", "error", []byte(err.Error())) },
		}.Run(ctx, w)
	}()
	note(t, st, "a") // cursor 2, after the stream's From: delivered however late it joins
	select {
	case <-sent:
	case <-time.After(30 * time.Second):
		t.Fatal("the change was not sent within 30 s")
	}
	cancel(errRevoked)
	if err := <-done; !errors.Is(err, errRevoked) {
		t.Fatalf("the stream ended with %v, want the cause", err)
	}
	body := rec.Body.String()
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" ||
		!strings.HasPrefix(body, "retry: 1000\n: ckpt change feed\n\n") ||
		!strings.Contains(body, "id: 2\nevent: change\ndata: a\n\n") ||
		!strings.HasSuffix(body, "event: error\ndata: revoked\n\n") {
		t.Errorf("stream %d %q:\n%s", rec.Code, rec.Header().Get("Content-Type"), body)
	}
}

// FuzzRead: any bytes a server sends parse without panic, and no event
// carries an id with a line break; an event written with Frame reads back
// exactly.
func FuzzRead(f *testing.F) {
	f.Add("change", `{"cursor":"1","kind":"event","id":"a","rev":1}`, "7", []byte(": keepalive\n\nid: 1\nevent: change\ndata: x\n\n"))
	f.Add("error", "two\nlines", "", []byte(": c\r\nretry: 10\r\ndata\r\ndata:x\r\n\r\nid\n\n"))
	f.Add("", "", "3", []byte("data: a\ndata: b\n\nid: 3\n\n"))
	f.Fuzz(func(t *testing.T, event, data, id string, raw []byte) {
		_ = Read(strings.NewReader(string(raw)), nil, func(e Event) error {
			if strings.ContainsAny(e.ID, "\r\n\x00") {
				t.Fatalf("id %q", e.ID)
			}
			return nil
		})
		if strings.ContainsAny(event+id, "\r\n\x00") || strings.Contains(data, "\r") || strings.HasPrefix(event, " ") || strings.HasPrefix(id, " ") {
			return
		}
		var got []Event
		err := Read(strings.NewReader(": keepalive\n\n"+string(Frame(id, event, []byte(data)))), nil, func(e Event) error {
			got = append(got, e)
			return nil
		})
		if err != nil || len(got) != 1 || got[0] != (Event{ID: id, Type: event, Data: data}) {
			t.Fatalf("Frame(%q, %q, %q) read back as %+v, %v", id, event, data, got, err)
		}
	})
}

// Read stops at the first error emit returns.
func TestReadStopsOnEmitError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := Read(strings.NewReader("data: 1\n\ndata: 2\n\n"), nil, func(Event) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Read: %v after %d events", err, n)
	}
}
