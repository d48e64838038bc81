package filestore

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestRacingBeatsLoseNone: a beat that another beat (another process's
// Store) overtakes between its read of the record and its write must not
// write over the other's: the later beat's time and the earlier one's
// presence both survive, in the beat file and in the liveness log. The
// first beat stops after its read until the second is waiting for the
// beat file's lock (or, without the lock, has finished).
func TestRacingBeatsLoseNone(t *testing.T) {
	ctx := context.Background()
	a := newStore(t, Options{})
	b, err := Open(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	if _, err := a.Append(ctx, "job", ckpt.Event{Type: ckpt.EventCreated, At: t0, Data: json.RawMessage(`{"title":"t"}`)}, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Beat(ctx, "job", ckpt.Signal{At: t0}); err != nil {
		t.Fatal(err)
	}
	busy := ckpt.Signal{At: t0.Add(10 * time.Second), State: ckpt.PresenceBusy, Reason: "Bash: make"}
	later := ckpt.Signal{At: t0.Add(20 * time.Second), Session: "sess-2"}

	waiting, bDone := make(chan struct{}), make(chan error, 1)
	var reads atomic.Int32
	var once sync.Once
	beatWaits = func() { once.Do(func() { close(waiting) }) }
	beatRead = func() {
		if reads.Add(1) != 1 {
			return // the second beat's read
		}
		go func() { bDone <- b.Beat(ctx, "job", later) }()
		select {
		case <-waiting:
		case err := <-bDone:
			bDone <- err
		}
	}
	t.Cleanup(func() { beatRead, beatWaits = nil, nil })
	if err := a.Beat(ctx, "job", busy); err != nil {
		t.Fatal(err)
	}
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	beatRead, beatWaits = nil, nil

	want := func(where string, h ckpt.Heartbeat) {
		t.Helper()
		p := h.Presence
		if !h.LastBeat.Equal(later.At) || p == nil || p.State != ckpt.PresenceBusy || p.Reason != busy.Reason || p.Session != later.Session {
			t.Errorf("%s: last beat %v, presence %+v; want the later beat's time %v and session %q on the first one's state busy (%q): one beat overwrote the other",
				where, h.LastBeat, p, later.At, later.Session, busy.Reason)
		}
	}
	c, err := a.Get(ctx, "job", 0)
	if err != nil {
		t.Fatal(err)
	}
	want("Get (the beat file)", c.Heartbeat)
	page, err := b.List(ctx, ckpt.ListOptions{})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("List: %+v, %v", page.Items, err)
	}
	want("a full List (the liveness log)", page.Items[0].Heartbeat)
}

// TestConcurrentBeatsKeepTheLatest: beats from many Stores at once, each
// with its own later times, leave the latest time of all recorded.
func TestConcurrentBeatsKeepTheLatest(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	if _, err := s.Append(ctx, "job", ckpt.Event{Type: ckpt.EventCreated, At: t0, Data: json.RawMessage(`{"title":"t"}`)}, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	const writers, beats = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		st, err := Open(s.dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for i := range beats {
				at := t0.Add(time.Duration(i*writers+w+1) * time.Millisecond)
				if err := st.Beat(ctx, "job", ckpt.Signal{At: at}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	c, err := s.Get(ctx, "job", 0)
	if err != nil {
		t.Fatal(err)
	}
	if latest := t0.Add(writers * beats * time.Millisecond); !c.Heartbeat.LastBeat.Equal(latest) {
		t.Errorf("last beat %v after concurrent beats; want the latest, %v", c.Heartbeat.LastBeat, latest)
	}
}
