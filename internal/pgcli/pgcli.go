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
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
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
	if key := f.Env.Var(keeper.EnvHandoffKey); strings.HasPrefix(key, "keeper-") {
		return &handedOff{Store: st, key: key}, nil
	}
	return st, nil
}

// handedOff is the store of a command ckpt retries directly after its
// keeper went away before answering (keeper.LostError): the command's
// unkeyed append gets the key the keeper was sent, so that it is applied
// once, whether the keeper had applied it or not. When it had, the
// command prints that first result as its own (the key is ckpt's, not the
// user's: there is no repeat to report).
type handedOff struct {
	ckpt.Store
	key string
}

func (h *handedOff) Append(ctx context.Context, id string, e ckpt.Event, o ckpt.AppendOptions) (ckpt.AppendResult, error) {
	ours := e.Key == "" && h.key != ""
	if ours {
		e.Key, h.key = h.key, ""
	}
	res, err := h.Store.Append(ctx, id, e, o)
	if ours && res.Replayed {
		res.Replayed = false
	}
	return res, err
}
