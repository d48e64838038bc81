package monitor_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/monitor"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
	"github.com/ckpt-dev/ckpt/memstore"
)

// countingStore records the listings and reads the monitor makes.
type countingStore struct {
	ckpt.Store
	mu    sync.Mutex
	lists []ckpt.Filter
	gets  []string
}

func (s *countingStore) List(ctx context.Context, o ckpt.ListOptions) (ckpt.Page, error) {
	s.mu.Lock()
	s.lists = append(s.lists, o.Filter)
	s.mu.Unlock()
	return s.Store.List(ctx, o)
}

func (s *countingStore) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	s.mu.Lock()
	s.gets = append(s.gets, id)
	s.mu.Unlock()
	return s.Store.Get(ctx, id, rev)
}

// counts returns the full listings (no SeenBefore) and the reads so far.
func (s *countingStore) counts() (full, pushed int, gets []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.lists {
		if f.SeenBefore.IsZero() {
			full++
		} else {
			pushed++
		}
	}
	return full, pushed, append([]string(nil), s.gets...)
}

// waitFor waits until the log holds want; the bound is generous, the
// test ends as soon as the line is there.
func waitFor(t *testing.T, log *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor never logged %q; log:\n%s", want, log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRunFollowsTheFeed: after its one listing, the monitor sees a write
// through the change feed, with no tick and no further listing.
func TestRunFollowsTheFeed(t *testing.T) {
	mem := memstore.New()
	start(t, mem, "a", time.Minute)
	// From here on the store's and the monitor's clocks stand still, 5
	// minutes after a's start: a is stale until it is written to.
	now := func() time.Time { return t0.Add(5 * time.Minute) }
	mem.SetClock(now)
	st := &countingStore{Store: mem}
	log := &syncbuf.Buffer{}
	m, err := monitor.New(monitor.Options{Store: st, Now: now, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, make(chan time.Time)) }()
	waitFor(t, log, "a (a-agent): working → stale")

	e := ckpt.MustEvent(ckpt.EventNote, t0.Add(5*time.Minute), ckpt.Actor{}, ckpt.Note{Text: "back"})
	if _, err := mem.Append(context.Background(), "a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, log, "a (a-agent): stale → working")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	full, pushed, gets := st.counts()
	if full != 1 || pushed != 0 {
		t.Errorf("listings: %d full and %d pushed down; want the one full listing at the start", full, pushed)
	}
	if strings.Join(gets, " ") != "a" {
		t.Errorf("reads %v; want the one checkpoint the feed changed", gets)
	}
}

// TestTickReadsOnlyWhatTimeCanChange: after the first look, a look is one
// pushed-down query for the checkpoints silent since the previous look,
// plus a read of each checkpoint it last reported as not working; never a
// full listing.
func TestTickReadsOnlyWhatTimeCanChange(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	clk := &clock{now: t0}
	mem.SetClock(clk.Now)
	var ids []string
	for i := range 20 {
		id := fmt.Sprintf("w%02d", i)
		ids = append(ids, id)
		start(t, mem, id, 10*time.Minute) // warn after 20m
	}
	st := &countingStore{Store: mem}
	m, err := monitor.New(monitor.Options{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	beat := func(at time.Duration, ids ...string) {
		t.Helper()
		clk.now = t0.Add(at)
		for _, id := range ids {
			if err := mem.Beat(ctx, id, ckpt.Signal{At: clk.now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	look := func(at time.Duration, want string) {
		t.Helper()
		if got := tickAt(t, ctx, m, clk, at); got != want {
			t.Fatalf("at +%s: transitions %q, want %q", at, got, want)
		}
	}
	look(0, "")
	beat(time.Minute, ids...)
	look(2*time.Minute, "")
	beat(25*time.Minute, ids[1:]...) // w00 stays quiet
	look(26*time.Minute, "w00:working>warn")
	beat(27*time.Minute, "w00")
	look(28*time.Minute, "w00:warn>working")

	full, pushed, gets := st.counts()
	if full != 1 || pushed != 3 {
		t.Errorf("listings: %d full, %d pushed down; want 1 full (the first look) and one pushed down per later look (3)", full, pushed)
	}
	st.mu.Lock()
	for _, f := range st.lists[1:] {
		if f.SeenBefore.IsZero() || len(f.Status) == 0 {
			t.Errorf("a later look listed with %+v; want SeenBefore and the live statuses pushed down", f)
		}
	}
	st.mu.Unlock()
	if strings.Join(gets, " ") != "w00" {
		t.Errorf("reads %v; want only w00, last reported warn and seen since", gets)
	}
}
