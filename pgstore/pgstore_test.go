package pgstore_test

import (
	"context"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

var cluster pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }

// openStore opens a store on a fresh database, a copy of one migrated
// once; extra are connection settings such as pool_max_conns=64.
func openStore(t testing.TB, extra ...string) (*pgstore.Store, string) {
	t.Helper()
	tmpl := cluster.Template(t, "ckpt_migrated", func(dsn string) error {
		_, err := pgstore.Migrate(context.Background(), dsn)
		return err
	})
	db := cluster.NewDatabaseFrom(t, tmpl)
	dsn := cluster.DSN(db, extra...)
	s, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, dsn
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store {
		s, _ := openStore(t)
		return s
	})
}
