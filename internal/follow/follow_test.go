package follow_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/follow"
	"github.com/ckpt-dev/ckpt/memstore"
)

func note(t *testing.T, st ckpt.Store, id string) {
	t.Helper()
	e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{}, ckpt.Created{})
	if _, err := st.Get(context.Background(), id, 0); err == nil {
		e = ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{}, map[string]string{"text": "x"})
	}
	if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits for draws to reach n, failing after a minute (a bound
// that only ends a broken test).
func waitFor(t *testing.T, draws *atomic.Int64, n int64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); draws.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for draw %d; %d so far", n, draws.Load())
		}
	}
}

func TestRedrawOnEachChangeAndTickUntilCancelled(t *testing.T) {
	st := memstore.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticks := make(chan time.Time)
	var draws atomic.Int64
	done := make(chan error, 1)
	go func() {
		done <- follow.Redraw(ctx, st, ticks, func(context.Context) error { draws.Add(1); return nil })
	}()
	waitFor(t, &draws, 1) // the first frame, with no change and no tick
	note(t, st, "a")
	waitFor(t, &draws, 2) // a write
	ticks <- time.Time{}
	waitFor(t, &draws, 3) // the slow timer
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("cancelled Redraw: %v", err)
	}
}

func TestRedrawEndsWithTheTicksAndOnADrawError(t *testing.T) {
	st := memstore.New()
	ticks := make(chan time.Time)
	close(ticks)
	var draws atomic.Int64
	if err := follow.Redraw(context.Background(), st, ticks, func(context.Context) error { draws.Add(1); return nil }); err != nil || draws.Load() != 1 {
		t.Fatalf("closed ticks: %v after %d draws, want nil after 1", err, draws.Load())
	}
	boom := errors.New("boom")
	err := follow.Redraw(context.Background(), st, make(chan time.Time), func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("draw's error: got %v", err)
	}
}

// brokenFeed is a store whose feed fails at once.
type brokenFeed struct{ *memstore.Store }

func (brokenFeed) Watch(context.Context, string, func(ckpt.Change) error) error {
	return errors.New("connection reset")
}

func TestRedrawSaysWhenTheFeedStops(t *testing.T) {
	err := follow.Redraw(context.Background(), brokenFeed{memstore.New()}, make(chan time.Time), func(context.Context) error { return nil })
	if err == nil || err.Error() != "the store's change feed stopped: connection reset" {
		t.Fatalf("a failed feed: %v", err)
	}
}
