package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestMigrate checks that processes starting together apply each
// migration exactly once, that a second run does nothing, and that a
// schema newer than this build is refused with a message that says what
// to do.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	dsn := cluster.DSN(cluster.NewDatabase(t))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied int
	)
	for range 4 {
		wg.Go(func() {
			r, err := pgstore.Migrate(ctx, dsn)
			if err != nil {
				t.Errorf("Migrate: %v", err)
				return
			}
			mu.Lock()
			applied += len(r.Applied)
			mu.Unlock()
		})
	}
	wg.Wait()
	if applied != pgstore.SchemaVersion() {
		t.Errorf("four concurrent migrations applied %d migrations in all, want %d (each once)", applied, pgstore.SchemaVersion())
	}
	r, err := pgstore.Migrate(ctx, dsn)
	if err != nil || len(r.Applied) != 0 || r.From != pgstore.SchemaVersion() || r.To != r.From {
		t.Errorf("Migrate of an up-to-date database: %+v, %v; want nothing applied", r, err)
	}

	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "INSERT INTO ckpt_schema (version, name) VALUES (999, 'from the future')"); err != nil {
		t.Fatal(err)
	}
	_, err = pgstore.Open(ctx, dsn)
	var se *pgstore.SchemaError
	if !errors.As(err, &se) || se.Have != 999 || !strings.Contains(err.Error(), "upgrade ckpt") {
		t.Errorf("Open of a newer schema: %v, want a *SchemaError saying to upgrade ckpt", err)
	}
	if _, err := pgstore.Migrate(ctx, dsn); !errors.As(err, &se) {
		t.Errorf("Migrate of a newer schema: %v, want a *SchemaError", err)
	}
}
