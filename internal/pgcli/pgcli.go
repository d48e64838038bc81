// Package pgcli wires a PostgreSQL store (pgstore) into the CLI: ckpt's
// stores plus pgstore's opener. ckpt hands every command over a
// PostgreSQL store to ckpt-pg (cmd/ckpt-pg), which is ckpt with this
// package and none of ckpt-server's libraries (the HTTP server, the
// dashboard, the MCP SDK, Prometheus), so that an agent's `ckpt update`
// over PostgreSQL starts a process as lean as the driver allows;
// ckpt-server (servercli) opens PostgreSQL stores through it too.
package pgcli

import (
	"context"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// ConnectTimeout bounds connecting to the database and migrating it.
const ConnectTimeout = 30 * time.Second

// Stores are ckpt's stores (cli.Stores) and a PostgreSQL database, which
// ckpt leaves to ckpt-pg.
func Stores() cmdutil.Stores {
	s := cli.Stores()
	s["postgres"], s["postgresql"] = Open, Open
	return s
}

// Open opens the PostgreSQL store at dsn (pgstore.Open brings its schema
// up to date). Its clock is the database server's, so that agents on many
// hosts are judged by one clock, unless CKPT_NOW pins the command's.
func Open(f *cmdutil.Factory, dsn string) (ckpt.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
	defer cancel()
	st, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if f.Env.Var(cmdutil.EnvNow) != "" {
		st.SetClock(f.Now)
	}
	return cli.HandOff(f, st), nil
}
