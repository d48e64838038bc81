package servercli

import (
	"net"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/spool"
)

// TestSpoolPendingAndDelivered: a write to an absent server with
// CKPT_SPOOL=1 exits 0 with a warning and waits in this machine's spool
// (what ckpt status shows); without CKPT_SPOOL it fails and the spool
// still holds the one write.
func TestSpoolPendingAndDelivered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	state := t.TempDir()
	vars := map[string]string{
		cmdutil.EnvStore: url, cmdutil.EnvToken: "ckpt_x_y", cli.EnvSpool: "1",
		"XDG_STATE_HOME": state, cmdutil.EnvAgent: "kai-7",
	}
	dir := spool.DirOf(state, "", url)
	code, _, errOut := runEnv(t, t.TempDir(), "", vars, "note", "kai-7/a", "while away")
	if code != 0 || !strings.Contains(errOut, "spooled") {
		t.Fatalf("a spooled note: exit %d, stderr %q", code, errOut)
	}
	if w, err := spool.Look(dir); w.Writes != 1 || err != nil {
		t.Errorf("spool waiting = %d, %v; want 1", w.Writes, err)
	}
	delete(vars, cli.EnvSpool)
	if code, _, errOut := runEnv(t, t.TempDir(), "", vars, "note", "kai-7/a", "not spooled"); code == 0 {
		t.Errorf("without CKPT_SPOOL a write to an absent server exited 0: %s", errOut)
	}
	if w, _ := spool.Look(dir); w.Writes != 1 {
		t.Errorf("spool waiting = %d after a refused write, want still 1", w.Writes)
	}
}
