// Package servercli is the wiring of the commands only ckpt-server runs:
// serve (the HTTP server, dashboard and metrics), mcp (the MCP server),
// token (the server's tokens), migrate, monitor (its webhooks) and
// checkpoint (the issue trackers' APIs), and the server store's HTTP client
// (and the keeper of a server store), which ckpt hands every command over
// a server store that no keeper takes to. They need the HTTP server,
// the MCP SDK, Prometheus and the PostgreSQL driver, which the ckpt binary
// does not link: its process starts for
// every hook and agent call, and those libraries' package initialisation
// and size would cost each one (see docs/design.md, "Two binaries"). ckpt
// runs these commands by replacing itself with ckpt-server.
package servercli

import (
	"github.com/ckpt-dev/ckpt/internal/buildinfo"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/pgcli"
)

// Verbs are ckpt-server's verbs: ckpt's (cli.Verbs), with the real
// server commands in place of ckpt's dispatchers to ckpt-server, and
// ckpt's keeper command with a keeper of a server store, which holds the
// HTTP client only ckpt-server links.
func Verbs() []cli.Verb {
	keeper := cli.Verb{Name: "keeper", Group: "store", Build: cli.NewKeeperCmd(openKeptRemote)}
	return cli.Replace(cli.Verbs(), append(serverVerbs(), keeper)...)
}

// serverVerbs are the commands only ckpt-server runs.
func serverVerbs() []cli.Verb {
	return []cli.Verb{
		{Name: "serve", Group: "store", Build: newServeCmd},
		{Name: "mcp", Group: "integrations", Build: newMCPCmd},
		{Name: "token", Group: "store", Build: newTokenCmd},
		{Name: "migrate", Group: "store", Build: newMigrateCmd},
		{Name: "monitor", Group: "watch", Build: newMonitorCmd},
		{Name: "checkpoint", Group: "protocols", Build: newCheckpointCmd},
	}
}

// Stores are the stores ckpt-server opens: ckpt-pg's (pgcli.Stores:
// ckpt's and a PostgreSQL database) and a ckpt serve server (remote).
func Stores() cmdutil.Stores {
	s := pgcli.Stores()
	s["http"], s["https"] = openRemote, openRemote
	return s
}

// serverVersion is the version the servers report to their clients
// (/v1/info, MCP's initialize): the module version ckpt version prints.
func serverVersion() string { return buildinfo.Read().Version }

// AsCkpt is env with the executable of ckpt rather than ckpt-server
// (cli.AsCkpt).
func AsCkpt(env *cmdutil.Env) *cmdutil.Env { return cli.AsCkpt(env, cli.ServerProgram) }
