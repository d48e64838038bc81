package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

func mustAppend(t testing.TB, s ckpt.Store, id string, e ckpt.Event) ckpt.AppendResult {
	t.Helper()
	r, err := s.Append(context.Background(), id, e, ckpt.AppendOptions{})
	if err != nil {
		t.Fatalf("Append %s %s: %v", id, e.Type, err)
	}
	return r
}

func created(title string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "test"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
}

func note(text string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{Agent: "test"}, ckpt.Note{Text: text})
}

// watchFor collects the changes after from for d, returning what came.
func watchFor(t *testing.T, s *pgstore.Store, from string, d time.Duration) []ckpt.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var got []ckpt.Change
	err := s.Watch(ctx, from, func(c ckpt.Change) error { got = append(got, c); return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Watch from %q: %v", from, err)
	}
	return got
}

// watchN collects the changes after from until it has n, or for a minute
// (a bound that only ends a broken test), then whatever else comes in the
// next half second: exactly the n wanted, and nothing more, on a loaded
// machine as on an idle one.
func watchN(t *testing.T, s *pgstore.Store, from string, n int) []ckpt.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got []ckpt.Change
	errEnough := errors.New("enough")
	err := s.Watch(ctx, from, func(c ckpt.Change) error {
		if got = append(got, c); len(got) == n {
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("Watch from %q: %v after %v, want %d changes", from, err, describe(got), n)
	}
	return append(got, watchFor(t, s, got[n-1].Cursor, 500*time.Millisecond)...)
}

func describe(cs []ckpt.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s@%d", c.ID, c.Rev))
	}
	return out
}

// TestFeedOutOfOrderCommit holds one append's transaction open after it
// has drawn its feed position, commits a later append meanwhile, and
// checks that a reader does not pass the gap: it sees nothing until the
// first commits, then both, each exactly once, and a cursor taken (Head)
// while the first was in flight delivers exactly the first.
func TestFeedOutOfOrderCommit(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t)
	defer s.Close()
	mustAppend(t, s, "a", created("a"))
	mustAppend(t, s, "b", created("b"))
	start, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// The blocker holds a row of the history that a's next append must
	// insert: that append locks a, records its change (drawing its feed
	// position) and then waits here, in flight.
	blocker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close(ctx)
	btx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := btx.Exec(ctx, "INSERT INTO ckpt_events (id, seq, line) VALUES ('a', 2, 'blocker')"); err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "a", note("first, committed last"), ckpt.AppendOptions{})
		firstDone <- err
	}()
	waitForLockWait(t, blocker)

	mustAppend(t, s, "b", note("second, committed first"))
	var posA, posB int64
	if err := blocker.QueryRow(ctx, "SELECT count(*) FROM ckpt_changes WHERE id = 'a' AND rev = 2").Scan(&posA); err != nil || posA != 0 {
		t.Fatalf("a's change is visible before it commits (%d, %v)", posA, err)
	}
	if got := watchFor(t, s, start, 1500*time.Millisecond); len(got) != 0 {
		t.Fatalf("with a's append in flight the reader delivered %v: it passed the gap", describe(got))
	}
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}

	if err := btx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("the held append: %v", err)
	}
	err = blocker.QueryRow(ctx, `SELECT (SELECT pos FROM ckpt_changes WHERE id = 'a' AND rev = 2),
		(SELECT pos FROM ckpt_changes WHERE id = 'b' AND rev = 2)`).Scan(&posA, &posB)
	if err != nil {
		t.Fatal(err)
	}
	if posA >= posB {
		t.Fatalf("a's change has position %d, b's %d: the test did not make a commit land out of order", posA, posB)
	}

	got := watchN(t, s, start, 2)
	if d := describe(got); fmt.Sprint(d) != "[a@2 b@2]" {
		t.Errorf("after both commits the reader delivered %v, want [a@2 b@2] (each once)", d)
	}
	if len(got) == 2 {
		if again := watchFor(t, s, got[1].Cursor, 500*time.Millisecond); len(again) != 0 {
			t.Errorf("resuming after the last change delivered %v again", describe(again))
		}
		if rest := watchN(t, s, got[0].Cursor, 1); fmt.Sprint(describe(rest)) != "[b@2]" {
			t.Errorf("resuming after a@2 delivered %v, want [b@2]", describe(rest))
		}
	}
	if fromHead := watchN(t, s, head, 1); fmt.Sprint(describe(fromHead)) != "[a@2]" {
		t.Errorf("watching from a Head taken while a was in flight delivered %v, want exactly [a@2]", describe(fromHead))
	}
}

// waitForLockWait waits until some session of the database is waiting
// for a lock.
func waitForLockWait(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		err := conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the held append never waited for the blocker's lock")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWatchCursorErrors checks the feed's cursor parser on what a client
// may send back.
func TestWatchCursorErrors(t *testing.T) {
	s, _ := openStore(t)
	defer s.Close()
	head, err := s.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	storeID := strings.Split(head, ".")[0]
	for _, bad := range []string{"x", "1.2.3", storeID + ".999999999999.0", storeID + ".-1.0", head + ".5:4:", head[:len(head)-1] + "99999999999999999999", "abc.1", head + "x"} {
		err := s.Watch(context.Background(), bad, func(ckpt.Change) error { return nil })
		if !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("Watch(%q): %v, want ErrInvalid", bad, err)
		}
	}
}

// TestFeedOrderAcrossDigits appends across a transaction ID that gains a
// digit (…999 to …1000): the feed's order is numeric, so every
// checkpoint's changes come in revision order, each once. (The first
// version of the feed query sorted transaction IDs as text.)
func TestFeedOrderAcrossDigits(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t)
	defer s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var xid int64
	if err := conn.QueryRow(ctx, "SELECT pg_current_xact_id()::text::bigint").Scan(&xid); err != nil {
		t.Fatal(err)
	}
	p := int64(10)
	for p <= xid+10 {
		p *= 10
	}
	// Each subtransaction that writes consumes a transaction ID.
	burn := fmt.Sprintf(`DO $$ BEGIN CREATE TEMP TABLE burn (i int);
		FOR i IN 1..%d LOOP BEGIN INSERT INTO burn VALUES (i); EXCEPTION WHEN others THEN NULL; END; END LOOP; END $$`, p-xid-5)
	if _, err := conn.Exec(ctx, burn); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		for _, id := range []string{"x", "y"} {
			e := note(fmt.Sprint(i))
			if i == 0 {
				e = created(id)
			}
			mustAppend(t, s, id, e)
		}
	}
	if err := conn.QueryRow(ctx, "SELECT max(xid)::text::bigint FROM ckpt_changes").Scan(&xid); err != nil || xid < p {
		t.Fatalf("the appends ended at transaction %d (%v), not past %d", xid, err, p)
	}
	got := watchN(t, s, "", 10)
	want := "[x@1 y@1 x@2 y@2 x@3 y@3 x@4 y@4 x@5 y@5]"
	if d := fmt.Sprint(describe(got)); d != want {
		t.Errorf("feed across transaction %d: %s, want %s", p, d, want)
	}
}

// TestCloseEndsWatch checks that closing the store ends a running Watch
// (which gives its connection back, so that Close does not wait forever).
func TestCloseEndsWatch(t *testing.T) {
	s, _ := openStore(t)
	watching := make(chan error, 1)
	go func() {
		watching <- s.Watch(context.Background(), ckpt.CursorNow, func(ckpt.Change) error { return nil })
	}()
	time.Sleep(200 * time.Millisecond)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case err := <-watching:
		if err == nil {
			t.Error("Watch returned nil after Close")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Watch still runs 30 s after Close")
	}
	<-closed
}
