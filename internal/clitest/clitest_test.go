package clitest_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// ckptMain runs ckpt's own command line, as internal/cli's tests do.
func ckptMain(env *cmdutil.Env, st ckpt.Store) int {
	return cli.MainOn(env, cli.Program{Verbs: cli.Verbs(), Stores: cli.Stores()}, st)
}

// TestHarnessRunsRealCommandLines: a command run through the harness writes
// its store with its clock and environment, and Get and History read it back.
func TestHarnessRunsRealCommandLines(t *testing.T) {
	h := clitest.New(t, ckptMain)
	h.Now = clitest.T0.Add(time.Hour)
	h.Vars[cmdutil.EnvAgent] = "alice"
	h.OK("start", "a", "--title", "A")
	if c := h.Get("a"); c.Title != "A" || !c.UpdatedAt.Equal(h.Now) {
		t.Errorf("after start: title %q at %v, want A at %v", c.Title, c.UpdatedAt, h.Now)
	}
	if ev := h.History("a"); len(ev) != 1 || ev[0].Actor.Agent != "alice" {
		t.Errorf("history %+v, want one event by alice", ev)
	}
	if out := h.Fails(cli.ExitNotFound, "show", "nothing"); !strings.Contains(out, "nothing") {
		t.Errorf("show of a missing checkpoint: %q", out)
	}
}

// TestHarnessWorkingDirectory: with Dir empty every command runs in a new
// temporary directory; with Dir set, in Dir.
func TestHarnessWorkingDirectory(t *testing.T) {
	var dirs []string
	h := clitest.New(t, func(env *cmdutil.Env, _ ckpt.Store) int {
		dirs = append(dirs, env.WorkDir)
		return 0
	})
	h.OK("x")
	h.OK("x")
	if dirs[0] == "" || dirs[0] == dirs[1] {
		t.Errorf("with Dir empty the commands ran in %q and %q, want two new directories", dirs[0], dirs[1])
	}
	h.Dir = t.TempDir()
	h.OK("x")
	if dirs[2] != h.Dir {
		t.Errorf("with Dir %q the command ran in %q", h.Dir, dirs[2])
	}
}

// TestHarnessChecksOutcomes: OK fails a test on a non-zero exit; Fails on
// another exit code or a stderr that is not one `ckpt: ` line.
func TestHarnessChecksOutcomes(t *testing.T) {
	for _, tc := range []struct {
		code   int
		stderr string
		check  func(h *clitest.Harness)
		fails  bool
	}{
		{0, "", func(h *clitest.Harness) { h.OK() }, false},
		{1, "ckpt: no\n", func(h *clitest.Harness) { h.OK() }, true},
		{2, "ckpt: bad flag\n", func(h *clitest.Harness) { h.Fails(2) }, false},
		{3, "ckpt: bad flag\n", func(h *clitest.Harness) { h.Fails(2) }, true},
		{2, "ckpt: one\nckpt: two\n", func(h *clitest.Harness) { h.Fails(2) }, true},
		{2, "bad flag\n", func(h *clitest.Harness) { h.Fails(2) }, true},
		{2, "ckpt: no newline", func(h *clitest.Harness) { h.Fails(2) }, true},
	} {
		rec := &recorder{TB: t}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // Fatalf ends only this goroutine
			defer wg.Done()
			h := clitest.New(rec, func(env *cmdutil.Env, _ ckpt.Store) int {
				fmt.Fprint(env.ErrOut, tc.stderr)
				return tc.code
			})
			tc.check(h)
		}()
		wg.Wait()
		if rec.failed != tc.fails {
			t.Errorf("exit %d, stderr %q: failed %v, want %v", tc.code, tc.stderr, rec.failed, tc.fails)
		}
	}
}

// recorder notes a failure instead of failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               { r.TB.Helper() }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }
