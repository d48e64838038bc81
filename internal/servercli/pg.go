package servercli

import (
	"context"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// pgConnectTimeout bounds connecting to the database and migrating it.
const pgConnectTimeout = 30 * time.Second

// openPG opens the PostgreSQL store at dsn (pgstore.Open brings its schema
// up to date). Its clock is the database server's, so that agents on many
// hosts are judged by one clock, unless CKPT_NOW pins the command's.
func openPG(f *cmdutil.Factory, dsn string) (ckpt.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pgConnectTimeout)
	defer cancel()
	st, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if f.Env.Var(cmdutil.EnvNow) != "" {
		st.SetClock(f.Now)
	}
	return st, nil
}
