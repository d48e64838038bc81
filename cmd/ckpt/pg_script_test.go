package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ckpt-dev/ckpt/internal/pgtest"
)

// pgCluster is the PostgreSQL cluster of TestPGScripts, started on first use.
var pgCluster pgtest.Cluster

// TestPGScripts runs the scripts in testdata/pgscript against a
// PostgreSQL store: each script gets a fresh database, named by CKPT_STORE
// as a postgres:// URL (and PGSTORE, the same URL, for --store).
func TestPGScripts(t *testing.T) {
	pgCluster.Need(t)
	t.Cleanup(func() {
		if err := pgCluster.Close(); err != nil {
			t.Error(err)
		}
	})
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
			return nil
		},
	})
}
