package cli

import "github.com/ckpt-dev/ckpt/internal/claude"

// installCommand is claude.InstallCommand for the running binary.
func installCommand(e *Env, own bool) string {
	return claude.InstallCommand(e.Executable, e.getenv, own)
}
