//go:build !unix

package cmdutil

// startDetached is nil where ckpt starts no background process.
var startDetached func(path string, args, env []string) error
