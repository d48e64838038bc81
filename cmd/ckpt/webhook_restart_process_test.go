package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
	admin := ""
	// stop stops the server once it counts delivered every body received:
	// a delivery whose answer it has not read yet is not told for sure,
	// and its next start tells it again (docs/api.md).
	stop := func(p *serveProcess, received int) {
		t.Helper()
		want := fmt.Sprintf(`ckpt_webhook_deliveries_total{result="delivered"} %d`, received)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			req, _ := http.NewRequest(http.MethodGet, p.url+"/metrics", nil)
			req.Header.Set("Authorization", "Bearer "+admin)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			metrics, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if strings.Contains(string(metrics), want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("/metrics lacks %s:\n%s", want, grepLines(string(metrics), "webhook"))
			}
		}
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("ckpt serve stopped with %v", err)
		}
	}
	local("start", "team/a", "--title", "Schema")
	local("start", "team/b")
	srv := serve()
	admin = srv.admin
	local("done", "team/b")
	if got := next(); got != "team/b done" {
		t.Fatalf("while serving: %s, want team/b done", got)
	}
	stop(srv, 1)
	local("block", "team/a", "which schema version?")
	srv = serve()
	if got := next(); got != "team/a blocked" {
		t.Fatalf("after a restart: %s, want team/a blocked (it changed while the server was down)", got)
	}
	stop(srv, 1)
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
	stop(srv, 1)
}
