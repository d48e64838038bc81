package filestore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

// TestOpenErrorsIsGetsActiveErrors holds OpenErrors to Get's ActiveErrors
// through a checkpoint's life: without errors (answered from the envelope
// alone), with open and cleared ones, with a state.json left behind by
// the history (a crash between the two writes), and missing.
func TestOpenErrorsIsGetsActiveErrors(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	at := time.Unix(1700000000, 0)
	appendEv := func(typ ckpt.EventType, data any) {
		t.Helper()
		at = at.Add(time.Second)
		if _, err := s.Append(ctx, "a/b", ckpt.MustEvent(typ, at, ckpt.Actor{}, data), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what string, fast bool) {
		t.Helper()
		got, err := s.OpenErrors(ctx, "a/b")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		c, err := s.Get(ctx, "a/b", 0)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.ActiveErrors(), got); diff != "" {
			t.Errorf("%s: OpenErrors differs from Get's ActiveErrors (-get +open):\n%s", what, diff)
		}
		if noErrors(s.files("a/b")) != fast {
			t.Errorf("%s: answered from the envelope alone: %v, want %v", what, !fast, fast)
		}
	}
	appendEv(ckpt.EventCreated, ckpt.Created{})
	appendEv(ckpt.EventNote, ckpt.Note{Text: `a note that says "errors": none`})
	same("no errors", true)
	stale, err := os.ReadFile(s.files("a/b").state())
	if err != nil {
		t.Fatal(err)
	}
	appendEv(ckpt.EventError, ckpt.ErrorChange{Type: "command: go test", Message: "FAIL"})
	appendEv(ckpt.EventError, ckpt.ErrorChange{Type: "command: make lint", Message: "unused"})
	same("two open errors", false)
	appendEv(ckpt.EventError, ckpt.ErrorChange{Type: "command: go test", Clear: true})
	same("one cleared", false)
	// state.json as it was before the errors: the history has moved on, so
	// the state holding no errors member says nothing.
	if err := os.WriteFile(s.files("a/b").state(), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	same("a state.json behind the history", false)
	if errs, err := s.OpenErrors(ctx, "a/b"); err != nil || len(errs) != 1 || errs[0].Type != "command: make lint" {
		t.Errorf("OpenErrors over a stale state.json: %+v, %v", errs, err)
	}
	if _, err := s.OpenErrors(ctx, "a/missing"); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("OpenErrors of a missing checkpoint: %v, want ErrNotFound", err)
	}
	if _, err := ckpt.OpenErrors(ctx, s, "a/b"); err != nil {
		t.Errorf("ckpt.OpenErrors through the store: %v", err)
	}
}

// FuzzCurrentWithoutErrors wraps arbitrary state bytes in an envelope
// with their checksum, as a writer would. For any bytes the envelope-only
// answer never panics and never calls current a state that covers
// another length of history. For any state that decodes, written again
// by the store's own encoder (the only writer of a state whose checksum
// holds), "no errors member" means the state has no errors.
func FuzzCurrentWithoutErrors(f *testing.F) {
	good := sampleEnvelope(f)
	i := bytes.Index(good, []byte(stateMember))
	head := good[:bytes.Index(good, []byte(`"state_sum":"`))]
	state := good[i+len(stateMember) : len(good)-2]
	wrap := func(state []byte) []byte {
		env := append([]byte(nil), head...)
		env = append(env, `"state_sum":"`+checksum(state)+`"`+stateMember...)
		return append(append(env, state...), '}', '\n')
	}
	f.Add(state, int64(321))
	f.Add(bytes.Replace(state, []byte(`"rev":1`), []byte(`"rev":1,"errors":[{"at":"2026-01-01T00:00:00Z","message":"m"}]`), 1), int64(321))
	f.Add(bytes.Replace(state, []byte(`"rev":1`), []byte(`"rev":1,"ERRORS" :[{"at":"2026-01-01T00:00:00Z","message":"m","cleared_at":"2026-01-01T00:00:01Z"}]`), 1), int64(321))
	f.Add([]byte(`{}`), int64(1))
	f.Fuzz(func(t *testing.T, state []byte, size int64) {
		if currentWithoutErrors(wrap(state), "a/b", size) && size != 321 {
			t.Fatalf("current for a history of %d bytes; the envelope says 321", size)
		}
		_, st, err := parseEnvelope(wrap(state), "a/b")
		if err != nil {
			return
		}
		canonical, err := encodeEnvelope(st, "0123456789abcdef0123456789abcdef", 321)
		if err != nil {
			t.Fatal(err)
		}
		if currentWithoutErrors(canonical, "a/b", 321) && len(st.Errors) > 0 {
			t.Fatalf("no errors member seen in %s, but the state has errors %+v", canonical, st.Errors)
		}
	})
}
