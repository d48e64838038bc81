package filestore

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

// TestSettleWhileAStoreLooksForAFile: a listing that settles while a new
// Store looks for an idle marker file to adopt still resolves a dead
// writer's marker. The Store used to lock every file it looked at, the
// dead writer's too, and the settle running in that moment took the file
// for a live Store's and left its marker: the listing then missed the dead
// writer's last update (TestCrashTorture failed so, once, under -race).
func TestSettleWhileAStoreLooksForAFile(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CKPT_TORTURE_WRITER=k", "CKPT_TORTURE_STORE="+s.Dir(), "CKPT_DIE_AFTER_HISTORY=1")
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the writer was not killed: %v", err)
	}
	listed := func() int64 {
		t.Helper()
		p, err := s.List(ctx, ckpt.ListOptions{Filter: ckpt.Filter{Prefix: "torture/k"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) == 0 {
			return 0
		}
		return p.Items[0].Rev
	}
	// While the new Store below holds a marker file it looks at, a listing
	// settles.
	var during []int64
	idleLocked = func() { during = append(during, listed()) }
	defer func() { idleLocked = nil }()
	other, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	appendOK(t, other, "other/x", createEvent())
	idleLocked = nil
	for _, rev := range during {
		if rev != 1 {
			t.Errorf("a listing while another Store looked for a marker file to adopt showed torture/k at revision %d (0: not listed); its history holds 1", rev)
		}
	}
	if rev := listed(); rev != 1 {
		t.Errorf("listed torture/k at revision %d; its history holds 1", rev)
	}
}
