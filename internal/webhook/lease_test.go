package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/internal/webhook"
	"github.com/ckpt-dev/ckpt/pgstore"
)

var cluster pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }

// TestTwoServersTellOnce: two servers over one PostgreSQL judge the same
// transitions, and only the one holding the webhooks lease tells them, so
// each reaches the receiver once. When that server stops, the other takes
// the lease and tells what follows, and again what it judged in the hold
// window, under the same delivery IDs.
func TestTwoServersTellOnce(t *testing.T) {
	cluster.Need(t)
	ctx := context.Background()
	dsn := cluster.DSN(cluster.NewDatabase(t))
	open := func() *pgstore.Store {
		s, err := pgstore.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	for _, id := range []string{"team/1", "team/2", "team/3", "team/4"} {
		appendEvent(t, a, id, ckpt.EventCreated, ckpt.Created{})
	}
	rcv, srv := newReceiver(t)
	target, err := webhook.ParseTarget(srv.URL + "/hook")
	if err != nil {
		t.Fatal(err)
	}
	run := func(st ckpt.Store) (stop func()) {
		n, err := webhook.New(webhook.Options{Store: st, Targets: []webhook.Target{target}, Secret: secret, Tick: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- n.Run(ctx) }()
		<-n.Ready() // its first look: nothing to tell
		return func() { cancel(); <-done }
	}
	stopA := run(a)
	defer func() {
		if stopA != nil {
			stopA()
		}
	}()
	appendEvent(t, a, "team/1", ckpt.EventBlocker, ckpt.BlockerChange{Text: "needs a key"})
	rcv.wait(t, 1)
	stopB := run(b)
	defer stopB()
	appendEvent(t, b, "team/2", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusFailed, Reason: "tests red"})
	rcv.wait(t, 1)
	appendEvent(t, a, "team/3", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone})
	rcv.wait(t, 1)
	time.Sleep(300 * time.Millisecond) // room for a second server's copy, were there one
	if got := rcv.wait(t, 0); len(got) != 3 {
		t.Fatalf("two servers delivered %d bodies for 3 transitions: %v", len(got), got)
	}

	stopA()
	stopA = nil
	appendEvent(t, b, "team/4", ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusFailed, Reason: "disk full"})
	// b tells team/4, and team/2 and team/3 again from its hold window.
	got := rcv.wait(t, 3)
	seen := map[string]string{}
	for _, body := range got {
		var e webhook.Event
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatal(err)
		}
		if e.Delivery == "" {
			t.Fatalf("no delivery ID: %s", body)
		}
		if id, ok := seen[e.Delivery]; ok && id != e.ID {
			t.Fatalf("delivery %s names %s and %s", e.Delivery, id, e.ID)
		}
		seen[e.ID+" "+string(e.To)] = e.Delivery
		seen[e.Delivery] = e.ID
	}
	for _, want := range []string{"team/1 blocked", "team/2 failed", "team/3 done", "team/4 failed"} {
		if seen[want] == "" {
			t.Errorf("%s was never told; got %v", want, got)
		}
	}
	if len(seen) != 8 {
		t.Errorf("want 4 transitions under 4 delivery IDs, got %v", seen)
	}
}
