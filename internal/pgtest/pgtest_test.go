package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

var cluster Cluster

func TestMain(m *testing.M) { Main(m, &cluster) }

// TestDatabaseSurvivesRestart checks what the store tests rely on: a
// fresh database per test that takes writes, and a restart that keeps them.
func TestDatabaseSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	db := cluster.NewDatabase(t)
	exec := func(sql string) int {
		conn, err := pgx.Connect(ctx, cluster.DSN(db))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return n
	}
	mustExec(t, cluster.DSN(db), "CREATE TABLE x AS SELECT 42 AS n")
	if err := cluster.Restart(); err != nil {
		t.Fatal(err)
	}
	if n := exec("SELECT n FROM x"); n != 42 {
		t.Errorf("after a restart the table holds %d, want 42", n)
	}
	other := cluster.NewDatabase(t)
	if other == db {
		t.Errorf("two tests got the same database %s", db)
	}
}

func mustExec(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
