// Command ckpt-server is ckpt with the commands that need the HTTP server,
// the dashboard, the MCP SDK, Prometheus, the PostgreSQL driver or an HTTP
// client: serve, mcp, token, migrate, monitor and checkpoint, and every
// command over a PostgreSQL store. ckpt
// runs it for those (ckpt serve is ckpt-server serve), so install the two
// together: CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...
// Every other command runs here as in ckpt.
package main

import (
	"os"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/servercli"
)

func main() {
	// ckpt's verbs with the real server commands in place of its
	// dispatchers, and ckpt's stores plus PostgreSQL.
	program := cli.Program{Verbs: servercli.Verbs(), Stores: servercli.Stores()}
	os.Exit(cli.Main(servercli.AsCkpt(cmdutil.System()), program))
}
