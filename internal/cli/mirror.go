package cli

import (
	"io"
	"path/filepath"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/protocols/mirror"
)

// Seed-format mirrors live in protocols/mirror. The mirror list is
// client-local whatever the store is: the machine that runs ckpt writes the
// seed files. The CLI wraps the store every command opens with the mirrors
// of its list, so every write path (CLI verbs, hooks, MCP) rewrites the
// seed-format files of the checkpoints it changes, on a local store, a
// PostgreSQL store or a server alike.

// EnvMirrors names the mirror list file to use with any store.
const EnvMirrors = "CKPT_MIRRORS"

// ProjectMirrorsFile is the mirror list used with a store that is not a
// local directory (a server, PostgreSQL), in the working directory.
const ProjectMirrorsFile = ".ckpt-mirrors.json"

// mirrorList is where the mirror list of store st is: $CKPT_MIRRORS when
// set; else, for a local store, mirrors.json in its directory (roots taken
// from its parent, the project); else .ckpt-mirrors.json in the working
// directory. Relative roots of a list file are taken from its directory.
func (f *factory) mirrorList(st ckpt.Store) mirror.List {
	if p := f.env.getenv(EnvMirrors); p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(f.env.WorkDir, p)
		}
		return mirror.ForFile(p)
	}
	if fs, ok := st.(*filestore.Store); ok {
		return mirror.ForStoreDir(fs.Dir())
	}
	return mirror.ForFile(filepath.Join(f.env.WorkDir, ProjectMirrorsFile))
}

// mirrorOptions are the library's options with warnings printed on warn.
func mirrorOptions(warn io.Writer, now func() time.Time) mirror.Options {
	return mirror.Options{Now: now, Warn: func(msg string) {
		if warn != nil {
			printWarning(warn, msg)
		}
	}}
}

// withMirrors wraps st with the mirrors of its list (mirror.Wrap): st
// itself when there are none.
func (f *factory) withMirrors(st ckpt.Store) ckpt.Store {
	return mirror.Wrap(st, f.mirrorList(st), mirrorOptions(f.env.ErrOut, f.now))
}
