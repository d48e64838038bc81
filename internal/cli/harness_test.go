package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/memstore"
)

// t0 is the clock of every test unless a test moves it.
var t0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// harness runs whole command lines (cobra included) against one memstore.
type harness struct {
	t     *testing.T
	store *memstore.Store
	now   time.Time
	vars  map[string]string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, store: memstore.New(), now: t0, vars: map[string]string{}}
}

// run executes `ckpt args...` and returns the exit code and both streams.
func (h *harness) run(args ...string) (code int, stdout, stderr string) {
	h.t.Helper()
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:    func(k string) string { return h.vars[k] },
		WorkDir:   h.t.TempDir(),
		Now:       func() time.Time { return h.now },
		Args:      args,
	}
	code = runOn(env, h.store)
	return code, out.String(), errOut.String()
}

// ok runs a command that must succeed and returns its stdout.
func (h *harness) ok(args ...string) string {
	h.t.Helper()
	code, out, errOut := h.run(args...)
	if code != 0 {
		h.t.Fatalf("ckpt %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// fails runs a command that must exit with code and returns its stderr,
// checking it is the one `ckpt: …` line.
func (h *harness) fails(code int, args ...string) string {
	h.t.Helper()
	got, out, errOut := h.run(args...)
	if got != code {
		h.t.Fatalf("ckpt %s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "ckpt: ") || strings.Count(errOut, "\n") != 1 {
		h.t.Fatalf("ckpt %s: stderr is not one `ckpt: ` line:\n%q", strings.Join(args, " "), errOut)
	}
	return errOut
}

// get returns the latest state of id.
func (h *harness) get(id string) *ckpt.Checkpoint {
	h.t.Helper()
	c, err := h.store.Get(context.Background(), id, 0)
	if err != nil {
		h.t.Fatalf("get %s: %v", id, err)
	}
	return c
}

// history returns the events of id.
func (h *harness) history(id string) []ckpt.Event {
	h.t.Helper()
	ev, err := h.store.History(context.Background(), id, 1, 0)
	if err != nil {
		h.t.Fatalf("history %s: %v", id, err)
	}
	return ev
}

// decodeCheckpoint parses one checkpoint from JSON output.
func decodeCheckpoint(t *testing.T, s string) *ckpt.Checkpoint {
	t.Helper()
	var c ckpt.Checkpoint
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatalf("output is not a checkpoint in JSON: %v\n%s", err, s)
	}
	return &c
}

// testWriter returns write options over store with buffers for output.
func testWriter(store ckpt.Store, out, errOut *bytes.Buffer) writeOptions {
	return writeOptions{
		common: common{
			IO:    cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut},
			Now:   func() time.Time { return t0 },
			Store: func() (ckpt.Store, error) { return store, nil },
		},
		Actor: ckpt.Actor{Agent: "Secondary-A", Session: "s1"},
	}
}
