package webhook_test

import (
	"context"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/webhook"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestRestartTellsWhatChangedWhileDownOverPostgreSQL: the same over
// PostgreSQL, the memory in the store's database (a server over it holds
// the webhooks lease, as the only one).
func TestRestartTellsWhatChangedWhileDownOverPostgreSQL(t *testing.T) {
	cluster.Need(t)
	ctx := context.Background()
	dsn := cluster.DSN(cluster.NewDatabase(t))
	st, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	restartScenario(t, st, func() webhook.Memory {
		m, err := webhook.OpenPGMemory(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return m
	})
}
