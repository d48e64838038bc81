package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	ckpt "github.com/ckpt-dev/ckpt"
)

// PGMemory is a Memory in the PostgreSQL database the store is in (table
// ckpt_webhook_states), shared by every server over it: the one holding
// the webhooks lease records what it tells, and any of them, restarted
// or taking the lease over, starts from it. A row with the empty ID marks
// that a baseline was taken.
type PGMemory struct{ pool *pgxpool.Pool }

const pgMemoryTable = `CREATE TABLE IF NOT EXISTS ckpt_webhook_states (
	id    text PRIMARY KEY,
	state text NOT NULL
)`

// OpenPGMemory connects to the database dsn names with a small pool of its
// own and creates the table if it is not there.
func OpenPGMemory(ctx context.Context, dsn string) (*PGMemory, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: PostgreSQL connection string: %v", ckpt.ErrInvalid, err)
	}
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, pgMemoryError(err)
	}
	if _, err := pool.Exec(ctx, pgMemoryTable); err != nil {
		// Two servers creating the table at once: one wins, the other
		// sees a duplicate in the catalog, and the table is there.
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" && pe.Code != "42P07" {
			pool.Close()
			return nil, pgMemoryError(err)
		}
	}
	return &PGMemory{pool: pool}, nil
}

// Close releases the connections.
func (m *PGMemory) Close() { m.pool.Close() }

func pgMemoryError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: webhook memory: %v", ckpt.ErrUnavailable, err)
}

// Load implements Memory.
func (m *PGMemory) Load(ctx context.Context) (map[string]ckpt.PresenceState, bool, error) {
	rows, err := m.pool.Query(ctx, `SELECT id, state FROM ckpt_webhook_states`)
	if err != nil {
		return nil, false, pgMemoryError(err)
	}
	states := map[string]ckpt.PresenceState{}
	ok := false
	var id, st string
	_, err = pgx.ForEachRow(rows, []any{&id, &st}, func() error {
		if id == "" {
			ok = true
		} else {
			states[id] = ckpt.PresenceState(st)
		}
		return nil
	})
	if err != nil {
		return nil, false, pgMemoryError(err)
	}
	return states, ok, nil
}

// Save implements Memory, in one transaction.
func (m *PGMemory) Save(ctx context.Context, states map[string]ckpt.PresenceState) error {
	ids, sts, gone := []string{""}, []string{"baseline"}, []string{}
	for id, st := range states {
		if st == "" {
			gone = append(gone, id)
		} else {
			ids, sts = append(ids, id), append(sts, string(st))
		}
	}
	err := pgx.BeginFunc(ctx, m.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO ckpt_webhook_states (id, state) SELECT * FROM unnest($1::text[], $2::text[])
			ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state`, ids, sts); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM ckpt_webhook_states WHERE id = ANY($1::text[])`, gone)
		return err
	})
	if err != nil {
		return pgMemoryError(err)
	}
	return nil
}
