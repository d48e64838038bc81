package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// TestLoneCkptTalksToTheKeeper: ckpt links no HTTP client, yet while this
// user's keeper of a server runs, a record command over that server is
// one ckpt process: a ckpt with no ckpt-server beside it or on PATH
// records through the keeper (that ckpt-server started when it wrote
// directly). With the keeper stopped, the same ckpt must hand the command
// to ckpt-server, and says how to install it.
func TestLoneCkptTalksToTheKeeper(t *testing.T) {
	if !keeper.Supported {
		t.Skip("the keeper runs on Linux only")
	}
	srv := newRigServer(t)
	k := serverRig(t, srv, srv.write)
	id := "kai-7/lone"
	k.must("start", id) // handed to ckpt-server, which starts the keeper
	s0 := k.waitKeeper()

	loneDir := t.TempDir()
	data, err := os.ReadFile(k.bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loneDir, "ckpt"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	lone := *k
	lone.bin = filepath.Join(loneDir, "ckpt")
	lone.extra = []string{"PATH=" + loneDir} // the last PATH wins: no ckpt-server anywhere
	lone.must("note", id, "from a ckpt alone")
	lone.must("update", id, "--current-step", "still alone")
	if s, ok := k.status(); !ok || s.PID != s0.PID || s.Requests < s0.Requests+2 {
		t.Errorf("the lone ckpt's commands did not go through the keeper: %+v then %+v", s0, s)
	}
	events, err := srv.store.History(context.Background(), id, 1, 0)
	if err != nil || len(events) != 3 || !strings.Contains(string(events[1].Data), "from a ckpt alone") {
		t.Fatalf("the server's history of %s: %d events (%v), want start, the note and the update", id, len(events), err)
	}

	k.must("keeper", "stop")
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := k.status(); !ok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the keeper still answers a minute after it was stopped")
		}
	}
	out, errOut, code := lone.run("note", id, "with no keeper")
	if code != 1 || !strings.Contains(errOut, "ckpt-server is not installed") {
		t.Errorf("a lone ckpt over a server with no keeper: exit %d, want 1 naming ckpt-server: %s%s", code, out, errOut)
	}
}
