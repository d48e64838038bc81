// Package servercli is the wiring of the commands only ckpt-server runs:
// serve (the HTTP server, dashboard and metrics), mcp (the MCP server) and
// token (the server's tokens). They need the HTTP server, the MCP SDK and
// Prometheus, which the ckpt binary does not link: its process starts for
// every hook and agent call, and those libraries' package initialisation
// and size would cost each one (see docs/design.md, "Two binaries"). ckpt
// runs these commands by replacing itself with ckpt-server.
package servercli

import "github.com/ckpt-dev/ckpt/internal/cli"

// Commands are the commands ckpt-server builds in place of ckpt's
// dispatchers (see cli.MainWith).
func Commands() []cli.Command {
	return []cli.Command{
		{Name: "serve", Build: newServeCmd},
		{Name: "mcp", Build: newMCPCmd},
		{Name: "token", Build: newTokenCmd},
	}
}

// mcpVersion is the version the servers report to clients.
const mcpVersion = "dev"
