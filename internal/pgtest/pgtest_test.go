package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// TestNeedWithoutPostgreSQL runs TestNeedHelper in a child process on a
// machine without PostgreSQL (no binary directory holds it): outside CI
// the test skips naming the install command; with CI=true it fails.
func TestNeedWithoutPostgreSQL(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNeedHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "PGTEST_NEED_HELPER=1", "PGTEST_BIN=", "CI="+ci)
		out, err := cmd.CombinedOutput()
		switch {
		case ci == "" && (err != nil || !strings.Contains(string(out), "--- SKIP") || !strings.Contains(string(out), InstallHint)):
			t.Errorf("outside CI: %v\n%s\nwant a skip naming %q", err, out, InstallHint)
		case ci == "true" && (err == nil || !strings.Contains(string(out), "--- FAIL") || !strings.Contains(string(out), "CI must run")):
			t.Errorf("with CI=true: %v\n%s\nwant a failure", err, out)
		}
	}
}

// TestNeedHelper is TestNeedWithoutPostgreSQL's child process (the
// os/exec helper-process pattern): on its own it does nothing.
func TestNeedHelper(t *testing.T) {
	if os.Getenv("PGTEST_NEED_HELPER") != "1" {
		return
	}
	BinDirs = []string{filepath.Join(t.TempDir(), "no-postgresql-here")}
	var c Cluster
	c.Need(t)
	t.Error("Need returned without PostgreSQL")
}
