package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestHeadSurvivesFailover: a feed cursor from Head must stay valid on the
// promoted standby. While the standby confirms nothing, beats (committed
// asynchronously) end transactions the standby never hears of; a Head
// that counted them as ended would name transaction IDs the promoted
// standby hands out again, and a reader from it would skip those
// transactions' changes. So Head waits for the standby like a write; after
// the failover, a Head on the new primary and a Watch from it deliver the
// new changes, and the cursor of a change delivered before the failover
// resumes with nothing missed.
func TestHeadSurvivesFailover(t *testing.T) {
	ha := pgtest.NewHA(t)
	db, err := ha.CreateDatabase()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := pgstore.Open(ctx, ha.URL(db))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustAppend(t, s, "ha/a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}))
	var before string
	wctx, cancel := context.WithCancel(ctx)
	err = s.Watch(wctx, "", func(c ckpt.Change) error { before = c.Cursor; cancel(); return nil })
	if before == "" {
		t.Fatalf("the feed did not deliver the first change: %v", err)
	}

	resume, err := ha.PauseStandby()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := s.Beat(ctx, "ha/a", ckpt.Signal{At: time.Now().Add(time.Duration(i) * time.Millisecond)}); err != nil {
			t.Fatal(err)
		}
	}
	hctx, hcancel := context.WithTimeout(ctx, 2*time.Second)
	head, err := s.Head(hctx)
	hcancel()
	if err == nil {
		t.Errorf("Head returned %s while the synchronous standby confirmed nothing: the promoted standby may not know the transactions it counts as ended", head)
	}
	if err := ha.KillPrimary(); err != nil {
		t.Fatal(err)
	}
	resume()
	if err := ha.Promote(); err != nil {
		t.Fatal(err)
	}

	// The pool's connections to the dead primary fail once each.
	var after string
	for try := 0; ; try++ {
		if after, err = s.Head(ctx); err == nil || try == 50 || !errors.Is(err, ckpt.ErrUnavailable) {
			break
		}
	}
	if err != nil {
		t.Fatalf("Head after the failover: %v", err)
	}
	for i := range 5 {
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: fmt.Sprint(i)})
		if _, err := s.Append(ctx, "ha/a", e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	froms := []string{after, before}
	if head != "" {
		froms = append(froms, head) // the cursor Head should not have made
	}
	for _, from := range froms {
		var revs []int64
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := s.Watch(wctx, from, func(c ckpt.Change) error {
			if revs = append(revs, c.Rev); len(revs) == 5 {
				cancel()
			}
			return nil
		})
		cancel()
		if fmt.Sprint(revs) != "[2 3 4 5 6]" {
			t.Errorf("a Watch from %s after the failover delivered revisions %v (%v), want [2 3 4 5 6]", from, revs, err)
		}
	}
}
