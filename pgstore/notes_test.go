package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
)

// TestCheckAcceptsAStateRowWrittenBeforeNotesWereBounded: a state row
// written by a ckpt that kept every note is sound (check finds nothing and
// writes nothing), the next append rewrites it bounded, as the fold of the
// history, and a row whose newest note differs from the history's is
// still reported.
func TestCheckAcceptsAStateRowWrittenBeforeNotesWereBounded(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t)
	defer s.Close()
	const id = "kai-7/notes"
	mustAppend(t, s, id, created("notes"))
	var all []string
	for i := range 200 {
		text := fmt.Sprintf("note %03d: %s", i, strings.Repeat("what the agent saw. ", 4))
		all = append(all, text)
		mustAppend(t, s, id, note(text))
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	setNotes := func(notes string) {
		t.Helper()
		if _, err := conn.Exec(ctx, `UPDATE ckpt_checkpoints SET state = jsonb_set(state::jsonb, '{context,notes}', to_jsonb($2::text))::json WHERE id = $1`, id, notes); err != nil {
			t.Fatal(err)
		}
	}
	problems := func() []ckpt.Problem {
		t.Helper()
		before := tablesHash(t, conn)
		r, err := s.Check(ctx, []string{id})
		if err != nil {
			t.Fatal(err)
		}
		if tablesHash(t, conn) != before {
			t.Error("Check changed the database")
		}
		return r.Problems
	}
	if p := problems(); len(p) != 0 {
		t.Fatalf("check of a sound checkpoint: %+v", p)
	}

	legacy := strings.Join(all, "\n")
	setNotes(legacy)
	if p := problems(); len(p) != 0 {
		t.Fatalf("check of a state row with every note (%d bytes): %+v, want nothing", len(legacy), p)
	}
	res := mustAppend(t, s, id, note("the newest"))
	if want := ckpt.BoundNotes(legacy + "\nthe newest"); res.State.Context.Notes != want {
		t.Fatalf("the append after it keeps %d bytes of notes, want the %d of the bounded fold", len(res.State.Context.Notes), len(want))
	}
	if p := problems(); len(p) != 0 {
		t.Fatalf("check after the append: %+v, want nothing", p)
	}

	setNotes(legacy + "\nthe newest!")
	if p := problems(); len(p) != 1 || !strings.Contains(p[0].What, "differs from fold(history)") {
		t.Fatalf("check of a row whose newest note differs from the history's: %+v, want the state row reported", p)
	}
}
