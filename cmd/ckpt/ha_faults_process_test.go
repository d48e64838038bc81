package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestPartitionAndStandbyDeath is docs/deploy.md's "The network
// partitions" and "The standby dies", on one setup: a real `ckpt serve
// --pg` reaching a primary with a synchronous standby through a TCP proxy
// (pgtest.Proxy), 8 remote writers that retry a retryable failure with the
// same key until acknowledged, and a ckpt command with CKPT_SPOOL=1.
//
//   - The network stalls (every byte held both ways, no reset): writes
//     wait, unanswered, and go on when it heals.
//   - The network refuses (connections cut, new ones closed): an append
//     answers 503 with Retry-After at once; the spooled command exits 0
//     and its write waits on this machine, delivered by the next command
//     once the network is back.
//   - The standby dies: commits wait for it and no write begun after its
//     death is acknowledged until it is back; then they all complete.
//
// Finally the primary's machine is lost and the standby promoted: every
// acknowledged write, and the spooled one, is there exactly once.
//
// CKPT_STANDBY_DOWN=40s keeps the standby dead that long (.ci/run
// documents it): past the server's 30 s request limit the waiting writes
// answer 503, their clients retry with the same key, and once the standby
// is back those retries are replays, each write once.
func TestPartitionAndStandbyDeath(t *testing.T) {
	var down time.Duration
	if s := os.Getenv("CKPT_STANDBY_DOWN"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			t.Fatalf("CKPT_STANDBY_DOWN=%q: want a duration, e.g. 40s", s)
		}
		down = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+down) // a bound on a hang
	defer cancel()
	start := time.Now()
	step := func(what string) { t.Logf("%v: %s", time.Since(start).Round(time.Millisecond), what) }
	bin := ckptBinary(t)
	ha := pgtest.NewHA(t)
	db, err := ha.CreateDatabase()
	if err != nil {
		t.Fatal(err)
	}
	proxy := pgtest.NewHAProxy(t, ha)
	// More pooled connections than writers: each write waiting for the
	// dead standby holds one, and reads need one free (docs/deploy.md).
	srv := startServePG(t, bin, proxy.URL(db)+"&connect_timeout=2&pool_max_conns=16", "127.0.0.1:0", true)
	step("primary, synchronous standby and ckpt serve --pg through a proxy started")
	ws := make([]*haWriter, 8)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &haWriter{id: fmt.Sprintf("ha/%02d", i), c: haClient(t, srv.url, srv.admin, nil)}
		wg.Go(func() { ws[i].run(ctx, stop) })
	}
	stopWriters := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopWriters()
	home := t.TempDir() // the spooling machine's
	agent := []string{"CKPT_STORE=" + srv.url, "CKPT_TOKEN=" + srv.admin}
	if out, code := remoteRunIn(t, bin, home, agent, "start", "ha/spooled"); code != 0 {
		t.Fatalf("start: %s", out)
	}
	waitWriters(t, ctx, ws, time.Time{}, 5)

	// A stall: the writers' queries are held in the proxy, unanswered
	// (appends may share a statement, so as few as one connection holds
	// them all).
	proxy.Stall(nil)
	stalled := time.Now()
	for proxy.Held() < 1 {
		select {
		case <-ctx.Done():
			t.Fatal("no connection holds a query in the stall")
		case <-time.After(10 * time.Millisecond):
		}
	}
	step(fmt.Sprintf("network stalled: %d connections hold bytes", proxy.Held()))
	healed := time.Now()
	proxy.Heal()
	checkHeld(t, ws, stalled, healed, "the stall")
	waitWriters(t, ctx, ws, healed, 5)
	step("network healed: every writer acknowledged 5 more")

	// A refusing network: 503 with Retry-After at once, and the spool.
	proxy.Cut()
	checkUnavailable(t, srv.url, srv.admin)
	spooling := append(agent, "CKPT_SPOOL=1")
	if out, code := remoteRunIn(t, bin, home, spooling, "note", "ha/spooled", "written while cut off"); code != 0 || !strings.Contains(out, "spooled") {
		t.Fatalf("a spooled note while the server is cut off from PostgreSQL: exit %d: %s", code, out)
	}
	step("network cut: 503 with Retry-After, and a write spooled")
	healed = time.Now()
	proxy.Heal()
	waitWriters(t, ctx, ws, healed, 5)
	if out, code := remoteRunIn(t, bin, home, agent, "show", "ha/spooled"); code != 0 || !strings.Contains(out, "written while cut off") {
		t.Fatalf("show after the network came back did not deliver the spooled note: exit %d: %s", code, out)
	}
	step("network back: writers go on, the spooled note delivered")

	// The standby dies: commits wait for it.
	if err := ha.KillStandby(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for n := 0; n < 1; {
		if n, err = ha.WaitingForStandby(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("no commit waits for the dead standby")
		case <-time.After(10 * time.Millisecond):
		}
	}
	step("standby killed: commits wait for it")
	if _, err := ws[0].c.Get(ctx, ws[0].id, 0); err != nil {
		t.Errorf("a read while the standby is dead: %v", err)
	}
	if down > 0 {
		step(fmt.Sprintf("keeping the standby dead for %v (CKPT_STANDBY_DOWN)", down))
		time.Sleep(down)
	}
	back := time.Now()
	if err := ha.StartStandby(); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, ws, killed, back, "the standby's death")
	waitWriters(t, ctx, ws, back, 5)
	replayed := 0
	for _, w := range ws {
		w.mu.Lock()
		replayed += w.replayed
		if w.err != nil {
			t.Errorf("%s: %v", w.id, w.err)
		}
		w.mu.Unlock()
	}
	step(fmt.Sprintf("standby back: every writer acknowledged 5 more (%d retries answered by a replay)", replayed))
	stopWriters()

	// Every acknowledged write is on the standby: lose the primary.
	if err := ha.KillPrimary(); err != nil {
		t.Fatal(err)
	}
	if err := ha.Promote(); err != nil {
		t.Fatal(err)
	}
	pgURL := ha.URL(db)
	total := checkHistories(t, ws, pgURL)
	st, err := pgstore.Open(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, err := st.History(ctx, "ha/spooled", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, e := range h {
		if e.Type == ckpt.EventNote {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("the spooled note is in the history %d times, want once", notes)
	}
	step(fmt.Sprintf("primary lost, standby promoted: %d acknowledged writes there, each once, and the spooled one", total))
}

// checkHeld checks that no writer had a write begun after from
// acknowledged before to: each writer's one write under way at from may
// have committed before and be acknowledged after it, no later one.
func checkHeld(t *testing.T, ws []*haWriter, from, to time.Time, what string) {
	t.Helper()
	for _, w := range ws {
		if n := w.since(from) - w.since(to); n > 1 {
			t.Errorf("%s: %d writes acknowledged during %s, at most the one under way when it began", w.id, n, what)
		}
	}
}

// checkUnavailable checks that an append answers 503 with Retry-After
// (within a bound on a hang).
func checkUnavailable(t *testing.T, url, token string) {
	t.Helper()
	e := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{})
	body, _ := json.Marshal(httpapi.WireEvent(e))
	req, _ := http.NewRequest(http.MethodPost, url+httpapi.PathEvents+"ha/probe", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("an append cut off from PostgreSQL got no answer: %v", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("an append cut off from PostgreSQL: %s, Retry-After %q, %s; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"), msg)
	}
}
