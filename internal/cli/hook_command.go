package cli

import (
	"github.com/ckpt-dev/ckpt/internal/claude"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// installCommand is claude.InstallCommand for the running binary.
func installCommand(e *cmdutil.Env, own bool) string {
	return claude.InstallCommand(e.ExecutablePath(), e.Var, own)
}
