package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestHAFailoverKeepsCommits checks what the failover tests rely on: a
// commit acknowledged by the primary is on the standby when the primary is
// killed, the multi-host URL finds no primary until the standby is
// promoted and then finds it, and the dead slot rebuilt as a standby
// carries the next failover.
func TestHAFailoverKeepsCommits(t *testing.T) {
	ctx := context.Background()
	h := NewHA(t)
	db, err := h.CreateDatabase()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(sql string, args ...any) error {
		conn, err := pgx.Connect(ctx, h.URL(db))
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql, args...)
		return err
	}
	count := func() (int, error) {
		conn, err := pgx.Connect(ctx, h.URL(db))
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		var n int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM n").Scan(&n)
		return n, err
	}
	if err := exec("CREATE TABLE n (v int)"); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		if err := exec("INSERT INTO n VALUES ($1)", round); err != nil {
			t.Fatal(err)
		}
		if err := h.KillPrimary(); err != nil {
			t.Fatal(err)
		}
		if err := exec("SELECT 1"); err == nil {
			t.Fatalf("round %d: with the primary dead the URL still found a read-write server", round)
		}
		if err := h.Promote(); err != nil {
			t.Fatal(err)
		}
		if n, err := count(); err != nil || n != round {
			t.Fatalf("round %d: after the failover the table holds %d rows (%v), want %d", round, n, err, round)
		}
		if round == 1 {
			if err := h.Rebuild(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
