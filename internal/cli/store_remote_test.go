package cli

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"
)

// TestSpoolPendingAndDelivered: a write to an absent server with
// CKPT_SPOOL=1 exits 0 with a warning, PendingSpool counts it (what ckpt
// status shows), and a command run once the server is back delivers it.
func TestSpoolPendingAndDelivered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	vars := map[string]string{
		EnvStore: "http://" + addr, EnvToken: "ckpt_x_y", EnvSpool: "1",
		"XDG_STATE_HOME": t.TempDir(), EnvAgent: "kai-7",
	}
	env := func(args ...string) (*factory, *bytes.Buffer, *bytes.Buffer) {
		var out, errOut bytes.Buffer
		return &factory{env: &Env{
			IOStreams: IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			Getenv:    func(k string) string { return vars[k] },
			WorkDir:   t.TempDir(),
			Now:       time.Now,
			Args:      args,
		}}, &out, &errOut
	}
	f, _, errOut := env("note", "kai-7/a", "while away")
	if code := run(f); code != 0 || !strings.Contains(errOut.String(), "spooled") {
		t.Fatalf("a spooled note: exit %d, stderr %q", code, errOut.String())
	}
	if n, dir := f.PendingSpool(); n != 1 || dir == "" {
		t.Errorf("PendingSpool = %d, %q; want 1", n, dir)
	}
	delete(vars, EnvSpool)
	f, _, errOut = env("note", "kai-7/a", "not spooled")
	if code := run(f); code == 0 {
		t.Errorf("without CKPT_SPOOL a write to an absent server exited 0: %s", errOut.String())
	}
	if n, _ := f.PendingSpool(); n != 1 {
		t.Errorf("PendingSpool = %d after a refused write, want still 1", n)
	}
}
