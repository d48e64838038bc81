package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// pgCluster is the PostgreSQL cluster of TestPostgreSQL, started on first use.
var pgCluster pgtest.Cluster

// TestPostgreSQL owns the cluster (this package's TestMain is
// testscript's): its subtests run the CLI against PostgreSQL stores, and
// the cluster stops when they are done.
func TestPostgreSQL(t *testing.T) {
	pgCluster.Need(t)
	t.Cleanup(func() {
		if err := pgCluster.Close(); err != nil {
			t.Error(err)
		}
	})
	t.Run("Scripts", testPGScripts)
	t.Run("HistoryMatchesFileStore", testPGHistoryMatchesFileStore)
	t.Run("Keeper", testKeeper)
	t.Run("KeeperKilledMidRequest", testKeeperKilledMidRequest)
	t.Run("KeeperIdleExit", testKeeperIdleExit)
	t.Run("KeeperRefusesUnsafeDirectories", testKeeperRefusesUnsafeDirectories)
	t.Run("KeeperStopsWhenUpgraded", testKeeperStopsWhenUpgraded)
	t.Run("MCPKeeper", testMCPKeeper)
	t.Run("MCPServersShareAKeeper", testMCPServersShareAKeeper)
	t.Run("MCPKeeperKilled", testMCPKeeperKilled)
	t.Run("MCPKeeperKilledMidRequest", testMCPKeeperKilledMidRequest)
}

// testPGScripts runs the scripts in testdata/pgscript against a
// PostgreSQL store: each script gets a fresh database, named by CKPT_STORE
// as a postgres:// URL (and PGSTORE, the same URL, for --store).
func testPGScripts(t *testing.T) {
	bin := ckptBinary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/pgscript",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			"json":  cmdJSON,
		},
		Setup: func(env *testscript.Env) error {
			url := pgCluster.URL(pgCluster.NewDatabase(t))
			env.Setenv("CKPT_STORE", url)
			env.Setenv("PGSTORE", url)
			// The scripts pin the direct path; keeper_process_test.go
			// holds the keeper's to it.
			env.Setenv("CKPT_KEEPER", "off")
			return scriptPath(env, bin)
		},
	})
}

// testPGHistoryMatchesFileStore appends the same events to a local store
// and to a PostgreSQL store and checks that the database holds, line for
// line, the bytes of the local history.jsonl: one chain, verified the same
// way, and exported byte for byte.
func testPGHistoryMatchesFileStore(t *testing.T) {
	ctx := context.Background()
	db := pgCluster.NewDatabase(t)
	pg, err := pgstore.Open(ctx, pgCluster.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	dir := filepath.Join(t.TempDir(), ".ckpt")
	fs, err := filestore.Init(dir, filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	at := time.Date(2026, 1, 15, 14, 30, 0, 123456789, time.UTC)
	actor := ckpt.Actor{Agent: "Alpha", Session: "s1"}
	title, step := "Shared <work> & \u00e9", "spec"
	events := []ckpt.Event{
		ckpt.MustEvent(ckpt.EventCreated, at, actor, ckpt.Created{Patch: ckpt.Patch{Title: &title}, Steps: []ckpt.Step{{ID: "research"}, {ID: "spec"}}}),
		ckpt.MustEvent(ckpt.EventStep, at.Add(time.Second), actor, ckpt.StepChange{ID: "research", Status: ckpt.StepDone}),
		ckpt.MustEvent(ckpt.EventUpdate, at.Add(2*time.Second), actor, ckpt.Patch{CurrentStep: &step}),
		{Type: ckpt.EventNote, At: at.Add(3 * time.Second), Actor: actor, Key: "k<1>", Data: []byte(`{ "text" : "spaced \u00e9" }`)},
	}
	for _, e := range events {
		for _, st := range []ckpt.Store{fs, pg} {
			if _, err := st.Append(ctx, "team/a", e, ckpt.AppendOptions{}); err != nil {
				t.Fatalf("%T: %v", st, err)
			}
		}
	}
	want, err := os.ReadFile(filepath.Join(dir, "checkpoints", "team+a", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pgCluster.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT line FROM ckpt_events WHERE id = 'team/a' ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	for _, l := range lines {
		got = append(append(got, l...), '\n')
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the database's history differs from history.jsonl:\n got %s\nwant %s", got, want)
	}
}
