package cli

import (
	"context"
	"time"

	"github.com/ckpt-dev/ckpt/pgstore"
)

// A PostgreSQL store is named by a postgres:// or postgresql:// URL in
// --store or CKPT_STORE (see pgstore.IsURL). Opening it brings its schema
// up to date (pgstore.Open); ckpt migrate does only that.

// pgConnectTimeout bounds connecting to the database and migrating it.
const pgConnectTimeout = 30 * time.Second

// openPGStore opens the PostgreSQL store at dsn. Its clock is the
// database server's, so that agents on many hosts are judged by one
// clock, unless CKPT_NOW pins the command's.
func (f *factory) openPGStore(dsn string) (*pgstore.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
	defer cancel()
	st, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if f.env.getenv(EnvNow) != "" {
		st.SetClock(f.now)
	}
	return st, nil
}
