// Package servercli is the wiring of the commands only ckpt-server runs:
// serve (the HTTP server, dashboard and metrics), mcp (the MCP server),
// token (the server's tokens) and migrate, and the PostgreSQL store, which
// ckpt hands every command over such a store to. They need the HTTP server,
// the MCP SDK, Prometheus and the PostgreSQL driver, which the ckpt binary
// does not link: its process starts for
// every hook and agent call, and those libraries' package initialisation
// and size would cost each one (see docs/design.md, "Two binaries"). ckpt
// runs these commands by replacing itself with ckpt-server.
package servercli

import (
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/buildinfo"
	"github.com/ckpt-dev/ckpt/internal/cli"
)

// Main runs ckpt-server's command line in env and returns the exit code.
func Main(env *cli.Env) int {
	return cli.MainWith(asCkpt(env), Extensions())
}

// Extensions are what ckpt-server adds to ckpt (see cli.MainWith): the
// commands it builds in place of ckpt's dispatchers, and the PostgreSQL
// store.
func Extensions() cli.Extensions {
	return cli.Extensions{
		Commands: []cli.Command{
			{Name: "serve", Build: newServeCmd},
			{Name: "mcp", Build: newMCPCmd},
			{Name: "token", Build: newTokenCmd},
			{Name: "migrate", Build: newMigrateCmd},
		},
		OpenPG: openPG,
	}
}

// serverVersion is the version the servers report to their clients
// (/v1/info, MCP's initialize): the module version ckpt version prints.
func serverVersion() string { return buildinfo.Read().Version }

// asCkpt is env with the executable of ckpt rather than ckpt-server:
// what hooks install and mcp install write into a client's settings, which
// must go through ckpt. Run by ckpt's dispatcher, that is the ckpt given in
// CKPT_EXECUTABLE; run directly, the ckpt installed beside ckpt-server.
func asCkpt(env *cli.Env) *cli.Env {
	base := filepath.Base(env.Executable)
	if strings.TrimSuffix(base, ".exe") != cli.ServerProgram {
		return env
	}
	e := *env
	e.Executable = env.Var(cli.EnvExecutable)
	if e.Executable == "" {
		e.Executable = filepath.Join(filepath.Dir(env.Executable), "ckpt"+strings.TrimPrefix(base, cli.ServerProgram))
	}
	return &e
}
