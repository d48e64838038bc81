//go:build unix

package cmdutil

import (
	"os"
	"syscall"
)

// execProgram replaces the process with path (see Env.Exec).
func execProgram(path string, args, env []string) error {
	return syscall.Exec(path, args, append(os.Environ(), env...))
}
