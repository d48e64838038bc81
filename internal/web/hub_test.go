package web

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

var errEnough = errors.New("enough")

// followN follows the hub from `from` until it has n changes.
func followN(t *testing.T, h *hub, from string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	err := h.follow(ctx, from, func(fs []frame) error {
		for _, f := range fs {
			got = append(got, f.cursor)
		}
		if len(got) >= n {
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("follow from %q: %v after %d of %d", from, err, len(got), n)
	}
	return got
}

func note(t *testing.T, st ckpt.Store, id string) {
	t.Helper()
	e := ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Note{Text: "n"})
	if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Pages that start before the hub, at the hub's start, inside its ring and
// after falling out of it each see every change once, in order.
func TestHubDeliversEveryChangeOnceFromAnyCursor(t *testing.T) {
	st := memstore.New()
	create := func(id string) {
		e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Created{})
		if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("a") // cursor 1: before any hub
	h := &hub{store: st}
	// A page keeps the hub running from cursor 1 on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = h.join(ctx)
		close(started)
		<-ctx.Done()
		h.leave()
	})
	<-started
	for range 5 {
		note(t, st, "a") // cursors 2..6, in the ring
	}
	want := []string{"1", "2", "3", "4", "5", "6"}
	if got := followN(t, h, "0", 6); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("from before the hub: %v, want %v", got, want)
	}
	if got := followN(t, h, "1", 5); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Errorf("from the hub's start: %v, want %v", got, want[1:])
	}
	if got := followN(t, h, "4", 2); fmt.Sprint(got) != fmt.Sprint(want[4:]) {
		t.Errorf("from inside the ring: %v, want %v", got, want[4:])
	}
	// Many pages at once, while writes go on.
	var pages sync.WaitGroup
	results := make([][]string, 20)
	for p := range results {
		pages.Go(func() { results[p] = followN(t, h, "6", 30) })
	}
	for range 30 {
		note(t, st, "a")
	}
	pages.Wait()
	for p, got := range results {
		if len(got) != 30 || got[0] != "7" || got[29] != "36" {
			t.Errorf("page %d saw %d changes %v…", p, len(got), got[:min(3, len(got))])
		}
	}
	cancel()
	wg.Wait()
}

// A page that falls out of the ring catches up on the store and misses
// nothing.
func TestHubPageBehindTheRingCatchesUp(t *testing.T) {
	st := memstore.New()
	e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Created{})
	if _, err := st.Append(context.Background(), "a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	h := &hub{store: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := h.join(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.leave()
	for range hubRing + 10 {
		note(t, st, "a")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h.mu.Lock()
		n := h.base + len(h.ring)
		h.mu.Unlock()
		if n == hubRing+10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	got := followN(t, h, "1", hubRing+10)
	for i, c := range got {
		if c != fmt.Sprint(i+2) {
			t.Fatalf("change %d has cursor %s, want %d", i, c, i+2)
		}
	}
}
