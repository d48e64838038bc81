package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/storetest"
)

// tablesHash is a digest of every ckpt table's rows, to prove Check wrote
// nothing.
func tablesHash(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var h string
	err := conn.QueryRow(context.Background(), `SELECT md5(
		(SELECT coalesce(string_agg(c::text, '|' ORDER BY id), '') FROM ckpt_checkpoints c) ||
		(SELECT coalesce(string_agg(e::text, '|' ORDER BY id, seq), '') FROM ckpt_events e) ||
		(SELECT coalesce(string_agg(k::text, '|' ORDER BY id, key), '') FROM ckpt_keys k) ||
		(SELECT coalesce(string_agg(f::text, '|' ORDER BY pos), '') FROM ckpt_changes f))`).Scan(&h)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func exec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TestCheckRepair damages what can go wrong in the database (a state row
// that disagrees with its events, summary columns, the key index, a
// history line edited by hand), checks that Check reports each without
// changing a byte, and that Repair rebuilds what the history determines
// and leaves the damaged history as it is, reported.
func TestCheckRepair(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t)
	defer s.Close()
	for _, id := range []string{"ok", "state", "summary", "keys", "edited"} {
		mustAppend(t, s, id, created("title of "+id))
		e := note("a note")
		e.Key = "k1"
		mustAppend(t, s, id, e)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rep, err := s.Check(ctx, nil)
	if err != nil || rep.Checked != 5 || len(rep.Problems) != 0 {
		t.Fatalf("Check of a sound store: %+v, %v", rep, err)
	}

	exec(t, conn, `UPDATE ckpt_checkpoints SET state = replace(state::text, 'title of state', 'tampered')::json WHERE id = 'state'`)
	exec(t, conn, `UPDATE ckpt_checkpoints SET status = 'done' WHERE id = 'summary'`)
	exec(t, conn, `DELETE FROM ckpt_keys WHERE id = 'keys'`)
	exec(t, conn, `UPDATE ckpt_events SET line = convert_to(replace(convert_from(line, 'UTF8'), 'a note', 'b note'), 'UTF8') WHERE id = 'edited' AND seq = 2`)
	before := tablesHash(t, conn)
	rep, err = s.Check(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after := tablesHash(t, conn); after != before {
		t.Error("Check changed the database")
	}
	want := map[string]ckpt.Severity{"state": ckpt.SeverityWarning, "summary": ckpt.SeverityWarning, "keys": ckpt.SeverityWarning, "edited": ckpt.SeverityError}
	got := map[string]ckpt.Severity{}
	for _, p := range rep.Problems {
		got[p.ID] = p.Severity
	}
	for id, sev := range want {
		if got[id] != sev {
			t.Errorf("Check reports %s as %q, want %q (report %+v)", id, got[id], sev, rep.Problems)
		}
	}
	if len(rep.Problems) != len(want) || rep.Errors() != 1 {
		t.Errorf("Check found %d problems (%d errors): %+v; want 4 (1 error)", len(rep.Problems), rep.Errors(), rep.Problems)
	}
	if c, err := s.Get(ctx, "state", 0); err != nil || c.Title != "tampered" {
		t.Fatalf("the tampered state row reads as %+v, %v", c, err)
	}

	rep, err = s.Repair(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	fixed := 0
	for _, p := range rep.Problems {
		if p.Fixed {
			fixed++
		}
		if p.ID == "edited" && (p.Fixed || !strings.Contains(p.What, "damaged")) {
			t.Errorf("repair of a damaged history: %+v, want it reported, not fixed", p)
		}
	}
	if fixed != 3 || rep.Errors() != 1 {
		t.Errorf("Repair fixed %d, left %d errors: %+v; want 3 and 1", fixed, rep.Errors(), rep.Problems)
	}
	if c, err := s.Get(ctx, "state", 0); err != nil || c.Title != "title of state" {
		t.Errorf("after repair the state row reads %+v, %v", c, err)
	}
	if r, err := s.Append(ctx, "keys", func() ckpt.Event { e := note("retry"); e.Key = "k1"; return e }(), ckpt.AppendOptions{}); err != nil || !r.Replayed {
		t.Errorf("after repair of the key index a retried key: %+v, %v; want a replay", r, err)
	}
	rep, err = s.Check(ctx, []string{"ok", "state", "summary", "keys"})
	if err != nil || len(rep.Problems) != 0 {
		t.Errorf("Check after Repair: %+v, %v", rep, err)
	}
	rep, err = s.Check(ctx, []string{"edited"})
	if err != nil || rep.Errors() != 1 {
		t.Errorf("Check of the edited history after Repair: %+v, %v; want its error again", rep, err)
	}
	// Put the line back: then the whole store verifies.
	exec(t, conn, `UPDATE ckpt_events SET line = convert_to(replace(convert_from(line, 'UTF8'), 'b note', 'a note'), 'UTF8') WHERE id = 'edited' AND seq = 2`)
	storetest.Verify(t, s)
}
