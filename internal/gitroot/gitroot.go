// Package gitroot finds the git repository a directory belongs to, by the
// file system alone (no git process): the one walk the hooks, the MCP
// installer and the code-state probe share.
package gitroot

import (
	"os"
	"path/filepath"
)

// Find returns the nearest directory at or above dir that holds a .git
// entry (a directory, or a file for a worktree or submodule), "" when
// there is none or dir is "".
func Find(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
