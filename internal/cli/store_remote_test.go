package cli

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// TestSpoolPendingAndDelivered: a write to an absent server with
// CKPT_SPOOL=1 exits 0 with a warning, the spool counts it (what ckpt
// status shows), and a command run once the server is back delivers it.
func TestSpoolPendingAndDelivered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	vars := map[string]string{
		cmdutil.EnvStore: "http://" + addr, cmdutil.EnvToken: "ckpt_x_y", EnvSpool: "1",
		"XDG_STATE_HOME": t.TempDir(), cmdutil.EnvAgent: "kai-7",
	}
	env := func(args ...string) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
		var out, errOut bytes.Buffer
		return newFactory(&cmdutil.Env{
			IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv:    func(k string) string { return vars[k] },
			WorkDir:   t.TempDir(),
			Now:       time.Now,
			Args:      args,
		}, ckptProgram()), &out, &errOut
	}
	f, _, errOut := env("note", "kai-7/a", "while away")
	if code := run(f, ckptProgram()); code != 0 || !strings.Contains(errOut.String(), "spooled") {
		t.Fatalf("a spooled note: exit %d, stderr %q", code, errOut.String())
	}
	if w, dir := spoolWaiting(f); w.Writes != 1 || dir == "" {
		t.Errorf("spool waiting = %d, %q; want 1", w.Writes, dir)
	}
	delete(vars, EnvSpool)
	f, _, errOut = env("note", "kai-7/a", "not spooled")
	if code := run(f, ckptProgram()); code == 0 {
		t.Errorf("without CKPT_SPOOL a write to an absent server exited 0: %s", errOut.String())
	}
	if w, _ := spoolWaiting(f); w.Writes != 1 {
		t.Errorf("spool waiting = %d after a refused write, want still 1", w.Writes)
	}
}
