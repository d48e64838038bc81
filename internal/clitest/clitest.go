// Package clitest runs whole command lines of ckpt or ckpt-server, cobra
// included, against one memstore with a pinned clock and environment: the
// harness internal/cli's and internal/servercli's tests share. Only tests
// import it.
package clitest

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/memstore"
)

// T0 is the clock a new Harness starts at.
var T0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// Main runs the command line env.Args against store and returns its exit
// code: internal/cli's tests give runOn, internal/servercli's
// cli.MainOn with ckpt-server's program.
type Main func(env *cmdutil.Env, store ckpt.Store) int

// Harness runs command lines through its Main. Its fields are the state
// every command of a test sees; a test may change them between commands.
type Harness struct {
	T     testing.TB
	Store *memstore.Store
	Now   time.Time         // what the commands' clock reads
	Vars  map[string]string // the environment; a variable not in it is empty
	Dir   string            // the working directory; "" a new temporary one per command
	main  Main
}

// New returns a harness over a new memstore at T0 with an empty
// environment, running command lines with main.
func New(t testing.TB, main Main) *Harness {
	t.Helper()
	return &Harness{T: t, Store: memstore.New(), Now: T0, Vars: map[string]string{}, main: main}
}

// Run executes one command line (args without the program name) with empty
// stdin and returns the exit code and both streams.
func (h *Harness) Run(args ...string) (code int, stdout, stderr string) {
	h.T.Helper()
	var out, errOut bytes.Buffer
	dir := h.Dir
	if dir == "" {
		dir = h.T.TempDir()
	}
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv:    func(k string) string { return h.Vars[k] },
		WorkDir:   dir,
		Now:       func() time.Time { return h.Now },
		Args:      args,
	}
	code = h.main(env, h.Store)
	return code, out.String(), errOut.String()
}

// OK runs a command that must exit 0 and returns its stdout; any other exit
// fails the test with stderr.
func (h *Harness) OK(args ...string) string {
	h.T.Helper()
	code, out, errOut := h.Run(args...)
	if code != 0 {
		h.T.Fatalf("ckpt %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
	}
	return out
}

// Fails runs a command that must exit with code and returns its stderr. It
// fails the test on another exit code, or when stderr is not exactly one
// line starting `ckpt: ` (the error contract of docs/cli.md).
func (h *Harness) Fails(code int, args ...string) string {
	h.T.Helper()
	got, out, errOut := h.Run(args...)
	if got != code {
		h.T.Fatalf("ckpt %s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errOut)
	}
	if !strings.HasPrefix(errOut, "ckpt: ") || strings.Count(errOut, "\n") != 1 {
		h.T.Fatalf("ckpt %s: stderr is not one `ckpt: ` line:\n%q", strings.Join(args, " "), errOut)
	}
	return errOut
}

// Get returns the latest state of id in the store; an error fails the test.
func (h *Harness) Get(id string) *ckpt.Checkpoint {
	h.T.Helper()
	c, err := h.Store.Get(context.Background(), id, 0)
	if err != nil {
		h.T.Fatalf("get %s: %v", id, err)
	}
	return c
}

// History returns every event of id from the first; an error fails the
// test.
func (h *Harness) History(id string) []ckpt.Event {
	h.T.Helper()
	ev, err := h.Store.History(context.Background(), id, 1, 0)
	if err != nil {
		h.T.Fatalf("history %s: %v", id, err)
	}
	return ev
}
