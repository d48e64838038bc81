package cli

import (
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/mirror"
)

// Seed-format mirrors live in protocols/mirror; the CLI keeps the list of
// the local store in its directory (mirrors.json) and wraps the store every
// command opens, so every write path (CLI verbs, hooks, MCP) rewrites the
// seed-format files of the checkpoints it changes.

// mirrorOptions are the library's options with warnings printed on warn.
func mirrorOptions(warn io.Writer, now func() time.Time) mirror.Options {
	return mirror.Options{Now: now, Warn: func(msg string) {
		if warn != nil {
			printWarning(warn, msg)
		}
	}}
}

// withMirrors wraps st, the store in storeDir, with the mirrors of its
// list (mirror.Wrap): st itself when there are none.
func withMirrors(st ckpt.Store, storeDir string, warn io.Writer, now func() time.Time) ckpt.Store {
	return mirror.Wrap(st, mirror.ForStoreDir(storeDir), mirrorOptions(warn, now))
}
