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
	"encoding/json"
	"io"

	"github.com/ckpt-dev/ckpt/internal/cli"
)

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

// writeJSON writes v as indented JSON, the form of every --json.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// mcpVersion is the version the servers report to clients.
const mcpVersion = "dev"
