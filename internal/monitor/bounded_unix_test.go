//go:build unix

package monitor_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/monitor"
	"github.com/ckpt-dev/ckpt/memstore"
)

// tickWithin runs m.Tick and fails the test if it has not returned after a
// generous while: an action without a bound hangs it for good.
func tickWithin(t *testing.T, m *monitor.Monitor) []monitor.Transition {
	t.Helper()
	type result struct {
		tr  []monitor.Transition
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, err := m.Tick(context.Background())
		done <- result{tr, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.tr
	case <-time.After(30 * time.Second):
		t.Fatal("Tick is still waiting for a hung action")
		return nil
	}
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: the signal test says it is there
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// TestHungExecIsKilledWithItsProcessGroup: an --exec that never ends (a
// shell waiting for a sleep it started) is stopped at the action timeout,
// the whole process group with it, and the watch goes on.
func TestHungExecIsKilledWithItsProcessGroup(t *testing.T) {
	s := memstore.New()
	start(t, s, "a", time.Minute)
	start(t, s, "b", time.Minute)
	dir := t.TempDir()
	clk := &clock{now: t0}
	var log bytes.Buffer
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now, Log: &log, ActionTimeout: 300 * time.Millisecond,
		Exec: `sleep 300 & echo $! > ` + dir + `/"$CKPT_ID.pid"; wait`})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = t0.Add(150 * time.Second)
	if tr := tickWithin(t, m); len(tr) != 2 {
		t.Fatalf("transitions %+v, want a's and b's", tr)
	}
	for _, id := range []string{"a", "b"} { // b's action ran: the first did not stop the tick
		b, err := os.ReadFile(filepath.Join(dir, id+".pid"))
		if err != nil {
			t.Fatalf("the action for %s did not run: %v", id, err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		for deadline := time.Now().Add(time.Minute); alive(pid); {
			if time.Now().After(deadline) {
				t.Fatalf("the sleep the action for %s started (pid %d) outlived the timeout", id, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !strings.Contains(log.String(), "did not finish within 300ms") {
		t.Errorf("the log does not say the action timed out:\n%s", log.String())
	}
	clk.now = t0.Add(250 * time.Second)
	if tr := tickWithin(t, m); len(tr) != 2 {
		t.Fatalf("the next tick: transitions %+v, want both stale", tr)
	}
}

// TestHungWebhookIsAbandoned: a webhook that never answers is given up at
// the action timeout and the watch goes on, even with a client of its own
// that has no timeout.
func TestHungWebhookIsAbandoned(t *testing.T) {
	s := memstore.New()
	start(t, s, "a", time.Minute)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	clk := &clock{now: t0}
	var log bytes.Buffer
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now, Log: &log, ActionTimeout: 200 * time.Millisecond,
		Webhook: srv.URL, HTTPClient: &http.Client{}})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = t0.Add(150 * time.Second)
	if tr := tickWithin(t, m); len(tr) != 1 {
		t.Fatalf("transitions %+v", tr)
	}
	if !strings.Contains(log.String(), "--webhook for a failed") || !strings.Contains(log.String(), "200ms") {
		t.Errorf("the log does not say the webhook timed out:\n%s", log.String())
	}
	clk.now = t0.Add(250 * time.Second)
	if tr := tickWithin(t, m); len(tr) != 1 {
		t.Fatalf("the next tick: transitions %+v", tr)
	}
}
