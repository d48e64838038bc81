package filestore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestKeyWindowFromMemory: a Store that keeps appending to a checkpoint
// answers a repeated key from its memory of the window exactly as a search
// of the history does: a key among the last KeyWindow events replays, one
// that fell out of the window is applied again, and a key another process
// wrote meanwhile replays.
func TestKeyWindowFromMemory(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	const id = "kai-7/keys"
	add := func(st *Store, key string) ckpt.AppendResult {
		t.Helper()
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{}, ckpt.Note{Text: key})
		e.Key = key
		r, err := st.Append(ctx, id, e, ckpt.AppendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, err := s.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= ckpt.KeyWindow; i++ { // k-0 is event 2, k-1000 event 1002
		if r := add(s, fmt.Sprintf("k-%d", i)); r.Replayed {
			t.Fatalf("k-%d replayed on its first append", i)
		}
	}
	s.mu.Lock()
	w := s.written[id]
	s.mu.Unlock()
	if w == nil || w.keys == nil || len(w.keys.set) != ckpt.KeyWindow {
		t.Fatalf("the Store keeps no window of %d keys in memory: %+v", ckpt.KeyWindow, w)
	}
	if r := add(s, "k-0"); r.Replayed || r.Event.Seq != 1003 {
		t.Fatalf("k-0, out of the window of the last %d events: replayed %v at %d, want applied as 1003", ckpt.KeyWindow, r.Replayed, r.Event.Seq)
	}
	// Now events 4 to 1003 are the window: k-1 (3) is out, k-2 (4) in.
	if r := add(s, "k-1"); r.Replayed {
		t.Fatalf("k-1 (event 3) replayed from outside the window")
	}
	if r := add(s, "k-3"); !r.Replayed || r.Event.Seq != 5 {
		t.Fatalf("k-3: replayed %v as %d, want the replay of event 5", r.Replayed, r.Event.Seq)
	}
	other, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	add(other, "from-another-process")
	if r := add(s, "from-another-process"); !r.Replayed {
		t.Fatal("a key another Store wrote after this one's last write was applied again")
	}
	add(s, "k-2000")
	if r := add(s, "k-2000"); !r.Replayed {
		t.Fatal("a key this Store just wrote was applied again")
	}
}
