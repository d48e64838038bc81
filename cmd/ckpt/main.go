// Command ckpt records and shows durable checkpoints of agent work. See
// docs/cli.md, or run `ckpt help`.
package main

import (
	"os"

	"github.com/ckpt-dev/ckpt/internal/cli"
)

func main() { os.Exit(cli.Main(cli.System())) }
