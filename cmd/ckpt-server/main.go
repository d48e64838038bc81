// Command ckpt-server is ckpt with the commands that need the HTTP server,
// the dashboard, the MCP SDK and Prometheus: serve, mcp and token. ckpt
// runs it for those commands (ckpt serve is ckpt-server serve), so install
// the two together: CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...
// Every other command runs here as in ckpt.
package main

import (
	"os"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/servercli"
)

func main() { os.Exit(servercli.Main(cli.System())) }
