package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// keyRows counts checkpoint id's rows in ckpt_keys.
func keyRows(t *testing.T, conn *pgx.Conn, id string) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM ckpt_keys WHERE id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMadeKeysAreNotIndexed: an append whose key was made for it
// (ckpt.KeyNew, as a keeper's client sends every append) writes no
// ckpt_keys row, by the fast path and by the locking path, and the store
// still checks clean; its resend (ckpt.KeyResent) through another Store
// replays it from the history; a given key is indexed as before, and an
// index row that names the wrong event is reported by Check.
func TestMadeKeysAreNotIndexed(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t)
	defer s.Close()
	other := openSecond(t, dsn)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	const id = "made/keys"
	made := ckpt.AppendOptions{KeyOrigin: ckpt.KeyNew}
	appendMade := func(st *pgstore.Store, e ckpt.Event) ckpt.AppendResult {
		t.Helper()
		e.Key = ckpt.NewKey("keeper-")
		res, err := st.Append(ctx, id, e, made)
		if err != nil || res.Replayed {
			t.Fatalf("append with a made key: %+v, %v", res, err)
		}
		return res
	}
	appendMade(s, created("made keys"))
	before := pgstore.FastAppends(s)
	var last ckpt.AppendResult
	for range 3 {
		last = appendMade(s, note("by the fast path"))
	}
	if fast := pgstore.FastAppends(s) - before; fast != 3 {
		t.Fatalf("%d of 3 appends went by the fast path", fast)
	}
	appendMade(other, note("by the locking path")) // other remembers nothing of id
	if n := keyRows(t, conn, id); n != 0 {
		t.Fatalf("appends with made keys wrote %d ckpt_keys rows, want none", n)
	}
	verified(t, s, id)

	again, err := other.Append(ctx, id, last.Event, ckpt.AppendOptions{KeyOrigin: ckpt.KeyResent})
	if err != nil || !again.Replayed || again.Event.Seq != last.Event.Seq || again.State.Rev != last.Event.Seq {
		t.Fatalf("resent made key: %+v, %v; want a replay of event %d", again, err, last.Event.Seq)
	}

	given := note("given key")
	given.Key = "given-1"
	mustAppend(t, s, id, given)
	if n := keyRows(t, conn, id); n != 1 {
		t.Fatalf("a given key wrote %d ckpt_keys rows, want 1", n)
	}
	verified(t, s, id)
	exec(t, conn, "UPDATE ckpt_keys SET seq = 2 WHERE id = 'made/keys'")
	rep, err := s.Check(ctx, []string{id})
	if err != nil || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].What, `key "given-1"`) {
		t.Fatalf("Check of an index row naming the wrong event: %+v, %v", rep, err)
	}
	if _, err := s.Repair(ctx, []string{id}); err != nil {
		t.Fatal(err)
	}
	verified(t, s, id)
}
