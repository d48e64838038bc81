package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// openSecond opens another Store on the database of dsn: another process
// writing to the same checkpoints.
func openSecond(t *testing.T, dsn string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// verified fails unless id's history verifies (History checks each line's
// checksum and the chain), its state is the fold of that history, and
// Check finds nothing wrong; it returns the state.
func verified(t *testing.T, s *pgstore.Store, id string) *ckpt.Checkpoint {
	t.Helper()
	ctx := context.Background()
	h, err := s.History(ctx, id, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	folded, err := ckpt.Fold(id, h)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rev != folded.Rev || got.Context.Notes != folded.Context.Notes || got.Title != folded.Title {
		t.Fatalf("%s: state rev %d notes %q title %q, fold of the history: rev %d notes %q title %q",
			id, got.Rev, got.Context.Notes, got.Title, folded.Rev, folded.Context.Notes, folded.Title)
	}
	rep, err := s.Check(ctx, []string{id})
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("%s: Check: %+v, %v", id, rep, err)
	}
	return got
}

// TestFastPathOtherWriters: a Store appends by its fast path only while
// nothing else wrote the checkpoint since its own last append. Another
// Store's append in between, a deletion and re-creation at the same
// revision, a compare-and-swap on a revision that moved and a repeated key
// each make the statement match nothing, and the locking path then does
// exactly what it does without the fast path.
func TestFastPathOtherWriters(t *testing.T) {
	ctx := context.Background()
	s1, dsn := openStore(t)
	defer s1.Close()
	s2 := openSecond(t, dsn)

	mustAppend(t, s1, "x", created("x"))
	mustAppend(t, s1, "x", note("a"))
	if n := pgstore.FastAppends(s1); n != 1 {
		t.Fatalf("fast appends after create+note: %d, want 1", n)
	}
	b := mustAppend(t, s2, "x", note("b"))
	c := mustAppend(t, s1, "x", note("c")) // s1 remembers rev 2: misses, locks
	if c.Event.Seq != 4 || c.Event.Prev != b.Event.Sum || c.State.Context.Notes != "a\nb\nc" {
		t.Fatalf("after another Store's append: seq %d prev %q (want 4, %q), notes %q", c.Event.Seq, c.Event.Prev, b.Event.Sum, c.State.Context.Notes)
	}
	verified(t, s1, "x")

	// Compare-and-swap against a revision that moved meanwhile.
	mustAppend(t, s2, "x", note("d"))
	_, err := s1.Append(ctx, "x", note("e"), ckpt.AppendOptions{IfRev: 4})
	var ce *ckpt.ConflictError
	if !errors.As(err, &ce) || ce.Have != 5 {
		t.Fatalf("IfRev 4 at revision 5: %v", err)
	}

	// A key among the last KeyWindow events replays, fast path or not.
	mustAppend(t, s1, "k", created("k"))
	first := note("keyed")
	first.Key = "key-1"
	r1 := mustAppend(t, s1, "k", first)
	r2 := mustAppend(t, s1, "k", first)
	if !r2.Replayed || r2.Event.Seq != r1.Event.Seq || r2.State.Rev != 2 {
		t.Fatalf("repeated key: replayed %v seq %d (want %d), rev %d", r2.Replayed, r2.Event.Seq, r1.Event.Seq, r2.State.Rev)
	}
	verified(t, s1, "k")

	// Deleted and made again up to the same revision by another Store:
	// the remembered revision matches, the chain does not.
	mustAppend(t, s1, "d", created("old"))
	mustAppend(t, s1, "d", note("old note"))
	if _, _, err := ckpt.ArchiveCheckpoint(ctx, s2, "d", "complete", ckpt.Lifecycle{Force: true}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s2, "d", created("new"))
	renewed := mustAppend(t, s2, "d", note("new note"))
	after := mustAppend(t, s1, "d", note("s1 again"))
	if after.Event.Seq != 3 || after.Event.Prev != renewed.Event.Sum || after.State.Title != "new" {
		t.Fatalf("after delete and re-create: seq %d prev %q (want 3, %q), title %q", after.Event.Seq, after.Event.Prev, renewed.Event.Sum, after.State.Title)
	}
	verified(t, s1, "d")
}

// TestFastPathClock: an event with no time gets the database's clock and
// one too far ahead is clamped to it, on the fast path as on the locking
// one (the fast path seals with its estimate of the server's clock and the
// statement checks the bound against the server's own).
func TestFastPathClock(t *testing.T) {
	s, _ := openStore(t)
	defer s.Close()
	mustAppend(t, s, "t", created("t"))
	for i, at := range []time.Time{{}, time.Now().Add(time.Hour), {}, time.Now().Add(time.Hour)} {
		e := ckpt.MustEvent(ckpt.EventNote, at, ckpt.Actor{Agent: "test"}, ckpt.Note{Text: "n"})
		before := time.Now()
		r := mustAppend(t, s, "t", e)
		// The cluster runs on this machine: its clock is this one.
		if r.Event.At.Before(before.Add(-2*time.Second)) || r.Event.At.After(time.Now().Add(2*time.Second)) {
			t.Errorf("append %d (at %v): stored at %v, not the server's now", i, at, r.Event.At)
		}
	}
	if n := pgstore.FastAppends(s); n != 4 {
		t.Errorf("fast appends: %d, want 4", n)
	}
	verified(t, s, "t")
}

// TestFastPathBatches: two Stores (two processes) append concurrently to
// the same 12 checkpoints, each writer walking them in its own order, with
// keys, so that fast appends go in batches of several checkpoints, some of
// which the other Store moved meanwhile. Every append is acknowledged (no
// deadlock between batches), each key is in its history exactly once, every
// acknowledged event is there as acknowledged, histories and Check are
// clean, and a change feed delivers every revision of every checkpoint
// exactly once, in revision order per checkpoint.
func TestFastPathBatches(t *testing.T) {
	ctx := context.Background()
	s1, dsn := openStore(t, "pool_max_conns=16")
	defer s1.Close()
	s2 := openSecond(t, dsn+" pool_max_conns=16")
	const ids, writers, rounds = 12, 8, 10
	head, err := s1.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		mustAppend(t, s1, fmt.Sprintf("b/%02d", i), created("batched"))
	}
	total := ids + writers*rounds*ids/2
	feed := watchInBackground(t, s1, head, total)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[string][]ckpt.Event{}
	)
	for w := range writers {
		s := []*pgstore.Store{s1, s2}[w%2]
		wg.Go(func() {
			for r := range rounds {
				for j := range ids / 2 {
					id := fmt.Sprintf("b/%02d", (j*(w+1)+r)%ids)
					e := note(fmt.Sprint(w, "-", r, "-", j))
					e.Key = fmt.Sprint("k-", w, "-", r, "-", j)
					res, err := s.Append(ctx, id, e, ckpt.AppendOptions{})
					if err != nil {
						t.Errorf("writer %d: %s: %v", w, id, err)
						return
					}
					mu.Lock()
					acked[id] = append(acked[id], res.Event)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if pgstore.FastStatements(s1)+pgstore.FastStatements(s2) == 0 {
		t.Fatal("no fast statement ran")
	}
	t.Logf("fast appends %d+%d in %d+%d statements", pgstore.FastAppends(s1), pgstore.FastAppends(s2), pgstore.FastStatements(s1), pgstore.FastStatements(s2))
	checkConcurrent(t, s1, "b/%02d", ids, total, acked, <-feed)
}

// checkConcurrent checks the outcome of concurrent keyed appends to the
// checkpoints named by format and 0…ids-1: total events in all, each key
// once per history, every acknowledged event in its history as
// acknowledged, histories and Check clean, and the feed's changes every
// revision exactly once, in revision order per checkpoint.
func checkConcurrent(t *testing.T, s *pgstore.Store, format string, ids, total int, acked map[string][]ckpt.Event, got []ckpt.Change) {
	t.Helper()
	ctx := context.Background()
	n := 0
	for i := range ids {
		id := fmt.Sprintf(format, i)
		h, err := s.History(ctx, id, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		n += len(h)
		keys := map[string]int{}
		for _, e := range h {
			keys[e.Key]++
		}
		for k, c := range keys {
			if c != 1 {
				t.Errorf("%s: key %q %d times", id, k, c)
			}
		}
		for _, a := range acked[id] {
			if a.Seq > int64(len(h)) || h[a.Seq-1].Sum != a.Sum {
				t.Errorf("%s: acknowledged event %d is not in the history as acknowledged", id, a.Seq)
			}
		}
		verified(t, s, id)
	}
	if n != total {
		t.Fatalf("%d events in all, want %d", n, total)
	}
	last := map[string]int64{}
	for _, c := range got {
		if c.Rev != last[c.ID]+1 {
			t.Fatalf("feed: %s revision %d after %d", c.ID, c.Rev, last[c.ID])
		}
		last[c.ID] = c.Rev
	}
	if len(got) != total {
		t.Fatalf("feed delivered %d changes, want %d", len(got), total)
	}
}

// TestFastPathStorePerWriter: six Stores with one writer each (six agent
// processes) append concurrently, with keys, to three shared checkpoints,
// so every fast append is a batch of one (the one-row statement, which
// takes the append lock inside itself) and many find that another Store
// moved the checkpoint while they waited for its lock. The outcome is what
// TestFastPathBatches checks; above all the feed keeps each checkpoint's
// revisions in order, which holds only if the statement takes the lock
// before its first write.
func TestFastPathStorePerWriter(t *testing.T) {
	ctx := context.Background()
	s0, dsn := openStore(t)
	defer s0.Close()
	const ids, writers, rounds = 3, 6, 12
	head, err := s0.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ids {
		mustAppend(t, s0, fmt.Sprintf("p/%d", i), created("shared"))
	}
	total := ids + writers*rounds
	feed := watchInBackground(t, s0, head, total)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		acked = map[string][]ckpt.Event{}
		fast  int64
	)
	for w := range writers {
		s := openSecond(t, dsn)
		wg.Go(func() {
			for r := range rounds {
				id := fmt.Sprintf("p/%d", (w+r/4)%ids) // a few appends in a row each: some fast
				e := note(fmt.Sprint(w, "-", r))
				e.Key = fmt.Sprint("k-", w, "-", r)
				res, err := s.Append(ctx, id, e, ckpt.AppendOptions{})
				if err != nil {
					t.Errorf("writer %d: %s: %v", w, id, err)
					return
				}
				mu.Lock()
				acked[id] = append(acked[id], res.Event)
				mu.Unlock()
			}
			mu.Lock()
			fast += pgstore.FastAppends(s)
			mu.Unlock()
		})
	}
	wg.Wait()
	if fast == 0 {
		t.Fatal("no fast append")
	}
	t.Logf("%d of %d appends fast", fast, writers*rounds)
	checkConcurrent(t, s0, "p/%d", ids, total, acked, <-feed)
}

// TestFastPathPlannedOnce: the one-row fast statement is prepared once per
// connection (after a Store's first, unprepared calls) and runs its
// generic plan, planned once, without PostgreSQL's five trial custom
// plans (planning it per call cost more than running it); the setting
// that makes it so is sent once on the connection, not with every append
// (a transaction that changes a setting costs its commit a walk over
// every setting).
func TestFastPathPlannedOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := openStore(t, "pool_max_conns=1")
	defer s.Close()
	mustAppend(t, s, "plan", created("plan"))
	const n = 20
	for i := range n {
		mustAppend(t, s, "plan", note(fmt.Sprint("n", i)))
	}
	if f := pgstore.FastAppends(s); f != n {
		t.Fatalf("%d of %d appends fast", f, n)
	}
	generic, custom, err := pgstore.FastPlans(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	// The Store's first statements go unprepared (a short process's);
	// they leave the connection planning generically, so the prepared
	// statement is planned once, not for each of its first five calls.
	if generic != n-pgstore.ColdCalls || custom != 0 {
		t.Fatalf("the fast statement ran %d generic and %d custom plans, want %d generic (planned once)", generic, custom, n-pgstore.ColdCalls)
	}
	if sets := pgstore.PlanModeSets(s); sets != 1 {
		t.Fatalf("%d of %d fast statements on one connection set plan_cache_mode, want 1", sets, n)
	}
}

// TestFastPathAfterGet: a fresh Store (a `ckpt update` process) that read
// a checkpoint's latest state appends after it by the fast path, and
// ckpt.Update's compare-and-swap stays exact: a write by another Store
// between the read and the append makes the append a conflict, and the
// retry inside ckpt.Update lands after it.
func TestFastPathAfterGet(t *testing.T) {
	ctx := context.Background()
	s1, dsn := openStore(t)
	defer s1.Close()
	mustAppend(t, s1, "g", created("read first"))
	s2 := openSecond(t, dsn)
	res, err := ckpt.Update(ctx, s2, "g", func(c *ckpt.Checkpoint) (ckpt.Event, error) { return note("after a read"), nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Rev != 2 || pgstore.FastAppends(s2) != 1 {
		t.Fatalf("ckpt.Update on a fresh Store: rev %d, %d fast appends; want rev 2 by the fast path", res.State.Rev, pgstore.FastAppends(s2))
	}
	s3 := openSecond(t, dsn)
	c, err := s3.Get(ctx, "g", 0)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s1, "g", note("in between"))
	_, err = s3.Append(ctx, "g", note("stale"), ckpt.AppendOptions{IfRev: c.Rev})
	var conflict *ckpt.ConflictError
	if !errors.As(err, &conflict) || conflict.Have != 3 {
		t.Fatalf("append after a stale read: %v, want a conflict at revision 3", err)
	}
	if _, err := ckpt.Update(ctx, s3, "g", func(c *ckpt.Checkpoint) (ckpt.Event, error) { return note("retried"), nil }); err != nil {
		t.Fatal(err)
	}
	got := verified(t, s1, "g")
	if got.Rev != 4 || got.Context.Notes != "after a read\nin between\nretried" {
		t.Fatalf("rev %d notes %q", got.Rev, got.Context.Notes)
	}
}
