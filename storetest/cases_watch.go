package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// watcher returns s as a ckpt.Watcher, failing the test when it is not one.
func watcher(t *testing.T, s ckpt.Store) ckpt.Watcher {
	t.Helper()
	w, ok := s.(ckpt.Watcher)
	if !ok {
		t.Fatalf("%T has no change feed (ckpt.Watcher)", s)
	}
	return w
}

// collect watches w from `from` until it has n changes or the wait is over.
func collect(t *testing.T, w ckpt.Watcher, from string, n int) []ckpt.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []ckpt.Change
	err := w.Watch(ctx, from, func(c ckpt.Change) error {
		got = append(got, c)
		if len(got) == n {
			return errDone
		}
		return nil
	})
	if !errors.Is(err, errDone) {
		t.Fatalf("Watch from %q: %v after %d of %d changes", from, err, len(got), n)
	}
	return got
}

var errDone = errors.New("seen enough")

func testWatch(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	w := watcher(t, s)
	head, err := w.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, "w/a", ckpt.Created{})
	create(t, s, "w/b", ckpt.Created{})
	mustAppend(t, s, "w/a", note(1, "x"))
	if err := s.Beat(ctx, "w/a", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	got := collect(t, w, head, 3)
	want := []struct {
		id  string
		rev int64
	}{{"w/a", 1}, {"w/b", 1}, {"w/a", 2}}
	for i, c := range got {
		if c.Kind != ckpt.ChangeEvent || c.ID != want[i].id || c.Rev != want[i].rev || c.Cursor == "" {
			t.Errorf("change %d = %+v, want %s at rev %d", i, c, want[i].id, want[i].rev)
		}
	}
	if again := collect(t, w, got[0].Cursor, 2); again[0].Cursor != got[1].Cursor || again[1].Cursor != got[2].Cursor {
		t.Errorf("resuming after the first change gave %+v, want the second and third", again)
	}
	if all := collect(t, w, "", 3); all[0].ID != "w/a" || all[0].Rev != 1 {
		t.Errorf("watching from the start begins with %+v", all[0])
	}
	// Nothing after the last change: the watch waits, and ends with ctx.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err = w.Watch(short, got[2].Cursor, func(c ckpt.Change) error { return fmt.Errorf("unexpected change %+v", c) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Watch past the end: %v, want the context's error", err)
	}
	// A delete is a change too.
	mustAppend(t, s, "w/b", event(2, ckpt.EventArchived, ckpt.Archive{Reason: "complete"}))
	if err := s.Delete(ctx, "w/b"); err != nil {
		t.Fatal(err)
	}
	tail := collect(t, w, got[2].Cursor, 2)
	if tail[1].Kind != ckpt.ChangeDeleted || tail[1].ID != "w/b" {
		t.Errorf("after a Delete: %+v, want a deleted change for w/b", tail[1])
	}
	err = w.Watch(ctx, "not-a-cursor-of-this-store", func(ckpt.Change) error { return nil })
	if !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Watch from a foreign cursor: %v, want ErrInvalid", err)
	}
}

// testWatchConcurrent checks that a watcher started before many concurrent
// writers sees every append exactly once, in each checkpoint's order.
func testWatchConcurrent(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	w := watcher(t, s)
	head, err := w.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 10
	results := make(chan []ckpt.Change, 1)
	go func() { results <- collectQuiet(w, head, writers*each) }()
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("wc/%d", i)
			create(t, s, id, ckpt.Created{})
			for j := 1; j < each; j++ {
				mustAppend(t, s, id, note(j, "n"))
			}
		})
	}
	wg.Wait()
	got := <-results
	if len(got) != writers*each {
		t.Fatalf("watcher saw %d changes, want %d", len(got), writers*each)
	}
	last := map[string]int64{}
	cursors := map[string]bool{}
	for _, c := range got {
		if c.Rev != last[c.ID]+1 {
			t.Errorf("%s: change to rev %d after rev %d", c.ID, c.Rev, last[c.ID])
		}
		last[c.ID] = c.Rev
		if cursors[c.Cursor] {
			t.Errorf("cursor %q delivered twice", c.Cursor)
		}
		cursors[c.Cursor] = true
	}
}

func collectQuiet(w ckpt.Watcher, from string, n int) []ckpt.Change {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []ckpt.Change
	_ = w.Watch(ctx, from, func(c ckpt.Change) error {
		got = append(got, c)
		if len(got) == n {
			return errDone
		}
		return nil
	})
	return got
}
