// Package cli is the ckpt command line: one cobra command per verb, each
// with an options struct and a run function over the streams and clock of
// a cmdutil.Factory. It is the only package that wires the backends and
// integrations together.
//
// Each binary assembles its program (cmd/ckpt: Verbs and Stores; cmd/ckpt-
// server: servercli's, the same with the server commands and PostgreSQL)
// and runs it with Main over a cmdutil.Env, so every command runs the same
// way in a test as in the real binary.
package cli

import "path/filepath"

// absPath is p taken from dir when relative, cleaned; "" stays "".
func absPath(dir, p string) string {
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
