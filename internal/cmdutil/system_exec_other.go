//go:build !unix

package cmdutil

// execProgram is nil where a process cannot replace itself: ckpt then says
// to run ckpt-server directly.
var execProgram func(path string, args, env []string) error
