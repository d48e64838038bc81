package servercli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/memstore"
)

// harness runs whole command lines of ckpt-server (cobra included) against
// one memstore, as internal/cli's tests run ckpt's.
type harness struct {
	t     *testing.T
	store *memstore.Store
	now   time.Time
	vars  map[string]string
	dir   string // the working directory; "" a new temporary one per command
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return &harness{t: t, store: memstore.New(), now: t0, vars: map[string]string{}}
}

// run executes `ckpt-server args...` and returns the exit code and both
// streams.
func (h *harness) run(args ...string) (code int, stdout, stderr string) {
	h.t.Helper()
	var out, errOut bytes.Buffer
	dir := h.dir
	if dir == "" {
		dir = h.t.TempDir()
	}
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:    func(k string) string { return h.vars[k] },
		WorkDir:   dir,
		Now:       func() time.Time { return h.now },
		Args:      args,
	}
	code = cli.MainOn(env, program(), h.store)
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
