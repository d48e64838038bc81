// Command ckpt-pg is ckpt with the PostgreSQL store: ckpt hands every
// command over a postgres:// store to it (as it hands serve, mcp, token
// and migrate to ckpt-server), so that ckpt itself links no database
// driver. It links none of ckpt-server's libraries either, so a `ckpt
// update` over PostgreSQL costs the driver's start-up and no more. Install
// it with the others: CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...
package main

import (
	"os"
	"runtime/debug"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/pgcli"
)

func main() {
	growStack()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400) // as ckpt: a short-lived process (cmd/ckpt)
	}
	// ckpt's verbs (serve, mcp, token, migrate, monitor and checkpoint as dispatchers to
	// ckpt-server) and ckpt's stores plus PostgreSQL.
	program := cli.Program{Verbs: cli.Verbs(), Stores: pgcli.Stores()}
	os.Exit(cli.Main(cli.AsCkpt(cmdutil.System(), cli.PGProgram), program))
}

// growStack grows the main goroutine's stack to 64 KB while it is shallow,
// as ckpt does (cmd/ckpt): a short process would otherwise grow it by
// copying, frame by frame, several times deep in cobra, the store and the
// driver.
//
//go:noinline
func growStack() {
	var pad [64 << 10]byte
	touch(pad[:])
}

// touch keeps pad, and with it growStack's frame, from being optimised away.
//
//go:noinline
func touch(b []byte) { b[0] = 1 }
