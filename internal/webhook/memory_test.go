package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/backoff"
	"github.com/ckpt-dev/ckpt/internal/webhook"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestRestartTellsWhatChangedWhileDown, over a local store with its
// memory in a file next to it.
func TestRestartTellsWhatChangedWhileDown(t *testing.T) {
	path := filepath.Join(t.TempDir(), webhook.MemoryFileName)
	restartScenario(t, memstore.New(), func() webhook.Memory { return webhook.NewFileMemory(path) })
	// The file is a record per line; a torn last line (a crash in a
	// Save) is skipped and the next Save starts a line of its own.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"team/x","sta`)
	f.Close()
	m := webhook.NewFileMemory(path)
	if err := m.Save(context.Background(), map[string]ckpt.PresenceState{"team/y": "blocked"}); err != nil {
		t.Fatal(err)
	}
	states, ok, err := m.Load(context.Background())
	if err != nil || !ok || states["team/y"] != "blocked" || states["team/a"] != "blocked" || states["team/x"] != "" {
		t.Fatalf("after a torn line: %v %v %v", states, ok, err)
	}
}

// restartScenario: a server that stops and starts again tells, at its
// start, each transition that happened while it was down, once, and not
// again one it told before it stopped; its first start ever tells nothing
// (what was true before is no transition). newMemory opens the memory as
// a restarted server would.
func restartScenario(t *testing.T, st ckpt.Store, newMemory func() webhook.Memory) {
	ctx := context.Background()
	for _, id := range []string{"team/a", "team/b", "team/c", "team/s"} {
		appendEvent(t, st, id, ckpt.EventCreated, ckpt.Created{})
	}
	appendEvent(t, st, "team/c", ckpt.EventBlocker, ckpt.BlockerChange{Text: "blocked before the first start"})
	rcv, srv := newReceiver(t)
	target, err := webhook.ParseTarget(srv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counts{m: map[string]int{}}
	start := func() (stop func()) {
		n, err := webhook.New(webhook.Options{Store: st, Targets: []webhook.Target{target}, Secret: secret, Tick: time.Hour, Memory: newMemory(), Count: cnt})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- n.Run(ctx) }()
		<-n.Ready() // its first look has queued what it tells at start
		stop = sync.OnceFunc(func() { cancel(); <-done })
		t.Cleanup(stop) // also when the test fails
		return stop
	}
	// told waits for the deliveries up to a sentinel transition made now:
	// one sender delivers in order, so what its first look queued arrives
	// before it. It returns them as "id to" without the sentinel.
	sentinels, seen := 0, 0
	told := func() []string {
		t.Helper()
		sentinels++
		id := "team/sentinel-" + string(rune('0'+sentinels))
		appendEvent(t, st, id, ckpt.EventCreated, ckpt.Created{})
		appendEvent(t, st, id, ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone})
		var got []string
		for {
			var e webhook.Event
			bodies := rcv.wait(t, 1)
			if err := json.Unmarshal([]byte(bodies[seen]), &e); err != nil {
				t.Fatal(err)
			}
			seen++
			if e.ID == id {
				// A delivery whose answer the sender has not read when the
				// server stops is told again at its start (at least once):
				// stop only once the sender knows.
				for deadline := time.Now().Add(30 * time.Second); cnt.get("delivered") < seen; time.Sleep(time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatalf("%d deliveries counted, %d received", cnt.get("delivered"), seen)
					}
				}
				return got
			}
			got = append(got, e.ID+" "+string(e.To))
		}
	}
	stop := start()
	if got := told(); len(got) != 0 {
		t.Fatalf("the first start told %v: what was true before it is no transition", got)
	}
	appendEvent(t, st, "team/a", ckpt.EventBlocker, ckpt.BlockerChange{Text: "needs a key"})
	if got := told(); !slices.Equal(got, []string{"team/a blocked"}) {
		t.Fatalf("while running: %v, want team/a blocked", got)
	}
	stop()

	// While the server is down: b fails, c is done, d is made blocked;
	// a stays blocked (told already), s is unchanged.
	appendEvent(t, st, "team/b", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusFailed, Reason: "tests red"})
	appendEvent(t, st, "team/c", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone})
	appendEvent(t, st, "team/d", ckpt.EventCreated, ckpt.Created{})
	appendEvent(t, st, "team/d", ckpt.EventBlocker, ckpt.BlockerChange{Text: "made while down"})
	stop = start()
	got := told()
	slices.Sort(got)
	if want := []string{"team/b failed", "team/c done", "team/d blocked"}; !slices.Equal(got, want) {
		t.Fatalf("after a restart: told %v, want %v (what changed while down, once)", got, want)
	}
	stop()
	stop = start()
	if got := told(); len(got) != 0 {
		t.Fatalf("a restart with nothing changed told %v", got)
	}
	stop()
	if bodies := strings.Join(rcv.wait(t, 0), "\n"); strings.Count(bodies, `"id":"team/a"`) != 1 {
		t.Fatalf("team/a told %d times: %s", strings.Count(bodies, `"id":"team/a"`), bodies)
	}
}

// TestUndeliveredIsToldAfterRestart: a transition whose delivery is still
// being retried when the server stops is told at its next start: it does
// not count as told.
func TestUndeliveredIsToldAfterRestart(t *testing.T) {
	st := memstore.New()
	appendEvent(t, st, "team/a", ckpt.EventCreated, ckpt.Created{})
	mem := webhook.NewFileMemory(filepath.Join(t.TempDir(), webhook.MemoryFileName))
	var down atomic.Bool
	down.Store(true)
	tried := make(chan struct{}, 10)
	bodies := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if down.Load() {
			tried <- struct{}{}
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		bodies <- string(body)
	}))
	defer srv.Close()
	target, err := webhook.ParseTarget(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	start := func() (stop func()) {
		n, err := webhook.New(webhook.Options{Store: st, Targets: []webhook.Target{target}, Tick: time.Hour, Memory: mem,
			Backoff: backoff.Policy{First: time.Hour, Max: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- n.Run(ctx) }()
		<-n.Ready()
		return func() { cancel(); <-done }
	}
	stop := start()
	appendEvent(t, st, "team/a", ckpt.EventBlocker, ckpt.BlockerChange{Text: "needs a key"})
	select {
	case <-tried:
	case <-time.After(30 * time.Second):
		t.Fatal("the receiver was never tried")
	}
	stop() // the delivery waits for its retry, an hour away
	down.Store(false)
	stop = start()
	defer stop()
	select {
	case b := <-bodies:
		if !strings.Contains(b, `"id":"team/a"`) || !strings.Contains(b, `"to":"blocked"`) {
			t.Fatalf("after the restart: %s, want team/a blocked", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a transition undelivered when the server stopped was not told at its next start")
	}
}

// TestFileMemoryStaysSmallWhileRunning: a server that runs for long
// saves a transition at a time without restarting; the file is compacted
// as it goes, so it stays about its checkpoints' size, and it still says
// each checkpoint's last state.
func TestFileMemoryStaysSmallWhileRunning(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), webhook.MemoryFileName)
	m := webhook.NewFileMemory(path)
	flip := []ckpt.PresenceState{"working", "blocked", "waiting_for_user"}
	const checkpoints, rounds = 10, 3000
	largest := int64(0)
	for i := range rounds {
		id := "team/" + string(rune('a'+i%checkpoints))
		if err := m.Save(ctx, map[string]ckpt.PresenceState{id: flip[i%len(flip)]}); err != nil {
			t.Fatal(err)
		}
		if info, err := os.Stat(path); err == nil {
			largest = max(largest, info.Size())
		}
	}
	if err := m.Save(ctx, map[string]ckpt.PresenceState{"team/a": ""}); err != nil { // forgotten
		t.Fatal(err)
	}
	// 3,000 lines of about 40 bytes appended would be 120 KB; compaction
	// keeps it near 64 KiB, the size below which Save only appends.
	if largest > 80<<10 {
		t.Errorf("the file grew to %d bytes for %d checkpoints", largest, checkpoints)
	}
	states, ok, err := webhook.NewFileMemory(path).Load(ctx)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	for i := rounds - checkpoints; i < rounds; i++ {
		id := "team/" + string(rune('a'+i%checkpoints))
		want := flip[i%len(flip)]
		if id == "team/a" {
			want = ""
		}
		if states[id] != want {
			t.Errorf("%s: %q, want %q (its last save)", id, states[id], want)
		}
	}
}
