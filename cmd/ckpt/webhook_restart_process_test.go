package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestServeTellsWhatChangedWhileDown: a real ckpt serve with --webhook is
// stopped; while it is down a local ckpt command blocks a checkpoint; the
// next start tells the receiver that transition, once, from the memory it
// keeps next to the store (webhooks.jsonl), and a further restart tells
// nothing again.
func TestServeTellsWhatChangedWhileDown(t *testing.T) {
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	bodies := make(chan string, 10)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- string(body)
	}))
	defer recv.Close()
	local := func(args ...string) {
		t.Helper()
		if out, code := remoteRunIn(t, bin, t.TempDir(), []string{"CKPT_STORE=" + store}, args...); code != 0 {
			t.Fatalf("ckpt %v: exit %d: %s", args, code, out)
		}
	}
	// next returns the next body's "id to", within a generous bound.
	next := func() string {
		t.Helper()
		select {
		case b := <-bodies:
			var e struct{ ID, To string }
			if err := json.Unmarshal([]byte(b), &e); err != nil {
				t.Fatalf("webhook body %s: %v", b, err)
			}
			return e.ID + " " + e.To
		case <-time.After(time.Minute):
			t.Fatal("no webhook within a minute")
			return ""
		}
	}
	serve := func() *serveProcess {
		return startServe(t, bin, store, "127.0.0.1:0", "--webhook", recv.URL+"/ckpt#state=blocked,done")
	}
	stop := func(p *serveProcess) {
		t.Helper()
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("ckpt serve stopped with %v", err)
		}
	}
	local("start", "team/a", "--title", "Schema")
	local("start", "team/b")
	srv := serve()
	local("done", "team/b")
	if got := next(); got != "team/b done" {
		t.Fatalf("while serving: %s, want team/b done", got)
	}
	stop(srv)
	local("block", "team/a", "which schema version?")
	srv = serve()
	if got := next(); got != "team/a blocked" {
		t.Fatalf("after a restart: %s, want team/a blocked (it changed while the server was down)", got)
	}
	stop(srv)
	if _, err := os.Stat(filepath.Join(store, "webhooks.jsonl")); err != nil {
		t.Errorf("the memory next to the store: %v", err)
	}
	srv = serve()
	local("start", "team/c")
	local("done", "team/c")
	// One sender delivers in order: anything told again at the start
	// would come before team/c.
	if got := next(); got != "team/c done" {
		t.Fatalf("after a restart with nothing changed while down: %s, want only the new team/c done", got)
	}
	stop(srv)
}
