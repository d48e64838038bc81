package cli

import (
	"context"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
)

// Seed-format mirrors live in protocols/mirror. The CLI wraps the store
// every command opens with the mirrors of its list, so every write path
// (CLI verbs, hooks, MCP) rewrites the seed-format files of the checkpoints
// it changes, on a local store, a PostgreSQL store or a server alike.

// EnvMirrors names the mirror list file to use with any store.
const EnvMirrors = "CKPT_MIRRORS"

// mirrorList is where the mirror list of store st is (mirror.Locate):
// $CKPT_MIRRORS, else a local store's own, else the project's file.
func mirrorList(f *cmdutil.Factory, st ckpt.Store) mirror.List {
	var storeDir string
	if fs, ok := st.(*filestore.Store); ok {
		storeDir = fs.Dir()
	}
	return mirror.Locate(f.Env.Var(EnvMirrors), f.Env.WorkDir, storeDir)
}

// mirrorOptions are the library's options with warnings printed on warn.
func mirrorOptions(warn io.Writer, now func() time.Time) mirror.Options {
	return mirror.Options{Now: now, Warn: func(msg string) {
		if warn != nil {
			cmdutil.PrintWarning(warn, msg)
		}
	}}
}

// withMirrors wraps st with the mirrors of its list (mirror.Wrap): st
// itself when there are none.
func withMirrors(f *cmdutil.Factory, st ckpt.Store) ckpt.Store {
	return mirror.Wrap(st, mirrorList(f, st), mirrorOptions(f.Env.ErrOut, f.Now))
}

// KeepMirrors returns what keeps st's mirrors current in a long-running
// server (mirror.Keep): every selected checkpoint's files written, then
// each change followed, the seeds' escalations (agent-checkpoints' (seed
// 002) warning message and stale line, sitebuilder's (seed 003) STATUS.md)
// written at once and every minute, and the mirror list re-read whenever
// its file changes. It runs until ctx ends. ckpt serve runs it.
func KeepMirrors(f *cmdutil.Factory, st ckpt.Store) func(ctx context.Context) {
	list, opts := mirrorList(f, st), mirrorOptions(f.Env.ErrOut, f.Now)
	return func(ctx context.Context) { mirror.Keep(ctx, st, list, opts, mirror.KeepOptions{Now: f.Now}) }
}
