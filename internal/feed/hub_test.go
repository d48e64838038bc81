package feed

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
func followN(t *testing.T, h *Hub, from string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	err := h.Follow(ctx, from, func(items []*Item) error {
		for _, it := range items {
			got = append(got, it.Cursor)
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

func create(t *testing.T, st ckpt.Store, id string) {
	t.Helper()
	e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Created{})
	if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

func note(t *testing.T, st ckpt.Store, id string) {
	t.Helper()
	e := ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Note{Text: "n"})
	if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hold keeps the hub running (one stream joined) until the test ends.
func hold(t *testing.T, h *Hub) {
	t.Helper()
	if _, err := h.join(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.leave)
}

// waitHeld waits until the hub's watch has taken n changes.
func waitHeld(t *testing.T, h *Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h.mu.Lock()
		got := h.base + len(h.ring)
		h.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub took %d changes, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Streams that start before the hub, at the hub's start, inside its ring
// and at the feed's end each see every change once, in order, and the
// store is watched once for all of them.
func TestHubDeliversEveryChangeOnceFromAnyCursor(t *testing.T) {
	st := memstore.New()
	create(t, st, "a") // cursor 1: before any hub
	h := New(st, 0, time.Millisecond)
	hold(t, h)
	for range 5 {
		note(t, st, "a") // cursors 2..6, in the ring
	}
	want := []string{"1", "2", "3", "4", "5", "6"}
	if got := followN(t, h, "", 6); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("from the feed's start: %v, want %v", got, want)
	}
	if got := followN(t, h, "1", 5); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Errorf("from the hub's start: %v, want %v", got, want[1:])
	}
	if got := followN(t, h, "4", 2); fmt.Sprint(got) != fmt.Sprint(want[4:]) {
		t.Errorf("from inside the ring: %v, want %v", got, want[4:])
	}
	waitHeld(t, h, 5)
	// Many streams at once, from the feed's end, while writes go on.
	var streams sync.WaitGroup
	results := make([][]string, 20)
	for p := range results {
		streams.Go(func() { results[p] = followN(t, h, ckpt.CursorNow, 30) })
	}
	for {
		h.mu.Lock()
		n := h.users
		h.mu.Unlock()
		if n == 21 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for range 30 {
		note(t, st, "a")
	}
	streams.Wait()
	for p, got := range results {
		if len(got) != 30 || got[0] != "7" || got[29] != "36" {
			t.Errorf("stream %d saw %d changes %v…", p, len(got), got[:min(3, len(got))])
		}
	}
}

// A burst longer than MaxDeliver reaches a stream in pieces of at most
// MaxDeliver, in order, each change once, without a batch's wait between
// them (the hub's batch here is an hour).
func TestHubHandsABurstOverInPieces(t *testing.T) {
	st := memstore.New()
	create(t, st, "a") // cursor 1: the hub's start
	h := New(st, 0, time.Hour)
	hold(t, h)
	n := 2*MaxDeliver + 10
	for range n {
		note(t, st, "a")
	}
	waitHeld(t, h, n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got []string
	var sizes []int
	err := h.Follow(ctx, "1", func(items []*Item) error {
		sizes = append(sizes, len(items))
		for _, it := range items {
			got = append(got, it.Cursor)
		}
		if len(got) >= n {
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("follow: %v after %d of %d changes (pieces %v)", err, len(got), n, sizes)
	}
	if want := []int{MaxDeliver, MaxDeliver, 10}; fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("pieces of %v, want %v", sizes, want)
	}
	for i, c := range got {
		if c != fmt.Sprint(i+2) {
			t.Fatalf("change %d is %s, want %d (of %v)", i, c, i+2, got)
		}
	}
}

// A stream that falls out of the ring is cut off with ErrBehind, never
// holding the writers back; following again from the last change it got
// (what Last-Event-ID does) delivers the rest, none missed, none twice.
func TestHubCutsOffASlowStreamThatThenResumes(t *testing.T) {
	st := memstore.New()
	create(t, st, "a")
	h := New(st, 8, time.Millisecond)
	hold(t, h)
	var got []string
	release, took := make(chan struct{}), make(chan struct{}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- h.Follow(ctx, "1", func(items []*Item) error {
			for _, it := range items {
				got = append(got, it.Cursor)
			}
			took <- struct{}{}
			<-release // a client that reads nothing for a while
			return nil
		})
	}()
	note(t, st, "a") // cursor 2: the stream takes it and stalls
	<-took
	for range 20 {
		note(t, st, "a") // the writers go on: 20 more appends, unblocked
	}
	waitHeld(t, h, 21)
	close(release)
	if err := <-errc; !errors.Is(err, ErrBehind) || !errors.Is(err, ckpt.ErrUnavailable) {
		t.Fatalf("a stream 20 changes behind a ring of 8 ended with %v, want ErrBehind (unavailable: retry)", err)
	}
	got = append(got, followN(t, h, got[len(got)-1], 21-len(got))...)
	for i, c := range got {
		if c != fmt.Sprint(i+2) {
			t.Fatalf("change %d has cursor %s, want %d (all: %v)", i, c, i+2, got)
		}
	}
}

// Memo makes a derived value once for every stream.
func TestItemMemoMakesOnce(t *testing.T) {
	var it Item
	calls := 0
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			it.Memo("k", func() []byte { calls++; return []byte("v") })
		})
	}
	wg.Wait()
	if v := it.Memo("k", func() []byte { return nil }); string(v) != "v" || calls != 1 {
		t.Errorf("memo %q after %d calls, want v after 1", v, calls)
	}
}
