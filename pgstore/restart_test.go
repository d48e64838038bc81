package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

// TestRestartUnderLoad restarts PostgreSQL (pg_ctl stop -m fast, start) in
// the middle of concurrent keyed writers. The writers see retryable
// errors (ckpt.ErrUnavailable) and nothing else, retry with the same key
// and succeed; afterwards every acknowledged append is in its history
// exactly once, every history verifies, Check finds nothing, and a change
// feed reader that lived through the restart saw every append once.
func TestRestartUnderLoad(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, "pool_max_conns=16")
	defer s.Close()
	const writers, each = 8, 40
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	feed := watchInBackground(t, s, head, writers*(each+1))

	var (
		appended     atomic.Int64
		unavailable  atomic.Int64
		restarted    = make(chan struct{})
		wg           sync.WaitGroup
		acknowledged = make([][]ckpt.Event, writers)
	)
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("load/%d", w)
			for i := 0; i <= each; i++ {
				e := note(fmt.Sprintf("%d-%d", w, i))
				if i == 0 {
					e = created(id)
				}
				e.Key = fmt.Sprintf("k-%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					r, err := s.Append(ctx, id, e, ckpt.AppendOptions{})
					if err == nil {
						acknowledged[w] = append(acknowledged[w], r.Event)
						appended.Add(1)
						break
					}
					if !ckpt.Retryable(err) || attempt > 600 {
						t.Errorf("writer %d append %d: %v (retryable: %v)", w, i, err, ckpt.Retryable(err))
						return
					}
					unavailable.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
				if i == each/3 {
					<-restarted // a third done before the restart, the rest after
				}
			}
		})
	}
	for appended.Load() < writers*int64(each/6) {
		time.Sleep(5 * time.Millisecond)
	}
	go func() {
		// The restart races the writers still working on their first third.
		if err := cluster.Restart(); err != nil {
			t.Errorf("restart: %v", err)
		}
		close(restarted)
	}()
	wg.Wait()
	if t.Failed() {
		return
	}
	if unavailable.Load() == 0 {
		t.Error("no writer saw the restart: the test did not test it")
	}
	t.Logf("%d appends acknowledged, %d retryable errors seen during the restart", appended.Load(), unavailable.Load())

	for w := range writers {
		verifyKeyedHistory(t, s, fmt.Sprintf("load/%d", w), fmt.Sprintf("k-%d-", w), each+1, acknowledged[w])
	}
	storetest.Verify(t, s)
	rep, err := s.Check(ctx, nil)
	if err != nil || len(rep.Problems) != 0 || rep.Checked != writers {
		t.Errorf("Check after the restart: %+v, %v; want %d clean checkpoints", rep, err, writers)
	}

	got := <-feed
	count := map[string]int{}
	for _, c := range got {
		count[fmt.Sprintf("%s@%d", c.ID, c.Rev)]++
	}
	for w := range writers {
		for rev := 1; rev <= each+1; rev++ {
			if k := fmt.Sprintf("load/%d@%d", w, rev); count[k] != 1 {
				t.Errorf("the feed delivered %s %d times across the restart, want once", k, count[k])
			}
		}
	}
}

// watchInBackground collects n changes after from (or what came in two
// minutes) and sends them on the channel it returns.
func watchInBackground(t *testing.T, s *pgstore.Store, from string, n int) <-chan []ckpt.Change {
	feed := make(chan []ckpt.Change, 1)
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(stop)
	go func() {
		var got []ckpt.Change
		_ = s.Watch(ctx, from, func(c ckpt.Change) error {
			got = append(got, c)
			if len(got) == n {
				return errors.New("all seen")
			}
			return nil
		})
		feed <- got
	}()
	return feed
}

// verifyKeyedHistory checks that id's history holds n events whose keys
// are prefix0 … prefix(n-1), each exactly once, and every acknowledged
// event as it was acknowledged.
func verifyKeyedHistory(t *testing.T, s *pgstore.Store, id, prefix string, n int, acknowledged []ckpt.Event) {
	t.Helper()
	h, err := s.History(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range h {
		seen[e.Key]++
	}
	for i := range n {
		if k := fmt.Sprint(prefix, i); seen[k] != 1 {
			t.Errorf("%s: key %s is in the history %d times, want once", id, k, seen[k])
		}
	}
	if len(h) != n {
		t.Errorf("%s: %d events, want %d", id, len(h), n)
	}
	for _, a := range acknowledged {
		if a.Seq > int64(len(h)) || h[a.Seq-1].Sum != a.Sum {
			t.Errorf("%s: acknowledged event %d (%s) is not in the history as acknowledged", id, a.Seq, a.Key)
		}
	}
}
