package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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

var secret = []byte("s3cret")

// receiver is a local webhook endpoint that checks each signature as a
// receiver would (HMAC-SHA256 of the raw body) and keeps the bodies.
type receiver struct {
	mu     sync.Mutex
	bodies []string
	bad    int
	fail   atomic.Int32 // answer 503 to this many requests first
	got    chan struct{}
}

func newReceiver(t *testing.T) (*receiver, *httptest.Server) {
	r := &receiver{got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		m := hmac.New(sha256.New, secret)
		m.Write(body)
		want := "sha256=" + hex.EncodeToString(m.Sum(nil))
		r.mu.Lock()
		defer r.mu.Unlock()
		if !hmac.Equal([]byte(req.Header.Get(webhook.HeaderSignature)), []byte(want)) {
			r.bad++
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if r.fail.Load() > 0 {
			r.fail.Add(-1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		r.bodies = append(r.bodies, string(body))
		r.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return r, srv
}

// wait waits for n more deliveries (a generous bound: a hung notifier
// fails the test instead of hanging it).
func (r *receiver) wait(t *testing.T, n int) []string {
	t.Helper()
	for range n {
		select {
		case <-r.got:
		case <-time.After(30 * time.Second):
			t.Fatalf("no delivery; got %v", r.bodies)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

type counts struct {
	mu sync.Mutex
	m  map[string]int
}

func (c *counts) Count(r string) { c.mu.Lock(); c.m[r]++; c.mu.Unlock() }
func (c *counts) get(r string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[r]
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func appendEvent(t *testing.T, st ckpt.Store, id string, typ ckpt.EventType, data any) {
	t.Helper()
	if _, err := st.Append(context.Background(), id, ckpt.MustEvent(typ, time.Time{}, ckpt.Actor{Agent: "a"}, data), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestTransitionsAreSignedRetriedAndFiltered: a transition into blocked,
// failed, done, waiting or stale reaches the receiver once, signed; a
// receiver that fails first gets it on a retry; a target's state and
// prefix filters and the Slack body hold.
func TestTransitionsAreSignedRetriedAndFiltered(t *testing.T) {
	st := memstore.New()
	clk := &clock{now: time.Now().UTC()}
	st.SetClock(clk.Now)
	title := "Nightly build"
	appendEvent(t, st, "kai-7/a", ckpt.EventCreated, ckpt.Created{Patch: ckpt.Patch{Title: &title, Interval: ptr(ckpt.Duration(time.Minute))}})
	appendEvent(t, st, "team/b", ckpt.EventCreated, ckpt.Created{})
	all, allSrv := newReceiver(t)
	slack, slackSrv := newReceiver(t)
	all.fail.Store(1)
	var targets []webhook.Target
	for _, raw := range []string{allSrv.URL + "/hook", slackSrv.URL + "/hook#state=failed,stale&prefix=kai-7/&format=slack"} {
		tg, err := webhook.ParseTarget(raw)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	if strings.Contains(targets[1].URL, "#") {
		t.Fatalf("the options fragment is sent: %s", targets[1].URL)
	}
	cnt := &counts{m: map[string]int{}}
	n, err := webhook.New(webhook.Options{Store: st, Targets: targets, Secret: secret, Tick: 20 * time.Millisecond, Now: clk.Now,
		Backoff: backoff.Policy{First: 10 * time.Millisecond, Max: 10 * time.Millisecond}, Retries: 1, Count: cnt})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-n.Ready() // the first look: nothing to tell

	appendEvent(t, st, "team/b", ckpt.EventBlocker, ckpt.BlockerChange{Text: "needs DISCOVERY.md"})
	got := all.wait(t, 1)
	var e webhook.Event
	if err := json.Unmarshal([]byte(got[0]), &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != "team/b" || e.To != "blocked" || e.From != "working" || e.Reason != "b1: needs DISCOVERY.md" || e.Type != "transition" {
		t.Fatalf("first delivery %s", got[0])
	}

	// kai-7/a goes silent past 4 minutes: stale, for both targets.
	clk.Add(5 * time.Minute)
	got = all.wait(t, 1)
	if !strings.Contains(got[1], `"id":"kai-7/a"`) || !strings.Contains(got[1], `"to":"stale"`) {
		t.Fatalf("stale delivery %s", got[1])
	}
	sl := slack.wait(t, 1)
	if !strings.HasPrefix(sl[0], `{"text":"ckpt: kai-7/a is stale: silent for more than 4m`) {
		t.Fatalf("Slack body %s", sl[0])
	}
	appendEvent(t, st, "team/b", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusFailed, Reason: "upstream gone"})
	appendEvent(t, st, "kai-7/a", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone})
	got = all.wait(t, 2)
	joined := strings.Join(got[2:], "\n")
	if !strings.Contains(joined, `"to":"failed","reason":"upstream gone"`) || !strings.Contains(joined, `"id":"kai-7/a"`) || !strings.Contains(joined, `"to":"done"`) {
		t.Fatalf("failed and done deliveries %s", joined)
	}
	// team/b's failure is outside the Slack target's prefix; done is not
	// among its states: nothing more reaches it.
	for deadline := time.Now().Add(30 * time.Second); cnt.get("delivered") < 5 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if cnt.get("retried") != 1 || cnt.get("delivered") != 5 || cnt.get("failed")+cnt.get("dropped") != 0 {
		t.Fatalf("counts %v, want 5 delivered, one after a retry", cnt.m)
	}
	time.Sleep(100 * time.Millisecond)
	slack.mu.Lock()
	defer slack.mu.Unlock()
	if len(slack.bodies) != 1 || all.bad+slack.bad != 0 {
		t.Fatalf("Slack target got %v; bad signatures %d", slack.bodies, all.bad+slack.bad)
	}
}

func TestParseTargetRefusesBadOptions(t *testing.T) {
	for _, raw := range []string{"ftp://x/y", "https://x/y#state=busy", "https://x/y#format=xml", "https://x/y#colour=red", "/relative"} {
		if _, err := webhook.ParseTarget(raw); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("ParseTarget(%q) = %v, want ErrInvalid", raw, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestAHungReceiverNeverHoldsAWriter: with a receiver that never answers,
// every write still completes; transitions past the queue are dropped and
// counted.
func TestAHungReceiverNeverHoldsAWriter(t *testing.T) {
	st := memstore.New()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	tg, _ := webhook.ParseTarget(srv.URL)
	cnt := &counts{m: map[string]int{}}
	n, err := webhook.New(webhook.Options{Store: st, Targets: []webhook.Target{tg}, Tick: time.Hour, QueueSize: 1, Count: cnt})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-n.Ready() // transitions before the first look are its baseline, never told
	for i := range 20 {
		id := "w/" + string(rune('a'+i))
		appendEvent(t, st, id, ckpt.EventCreated, ckpt.Created{})
		appendEvent(t, st, id, ckpt.EventBlocker, ckpt.BlockerChange{Text: "x"})
	}
	for deadline := time.Now().Add(30 * time.Second); cnt.get("dropped") == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if cnt.get("dropped") == 0 {
		t.Fatalf("20 transitions to a hung receiver with a queue of 1: none dropped (%v)", cnt.m)
	}
}
