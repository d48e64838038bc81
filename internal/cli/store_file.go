package cli

import (
	"errors"
	"fmt"
	"path/filepath"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// A local store is a directory: --store DIR, else $CKPT_STORE, else the
// nearest .ckpt/ walking up from the working directory (filestore.Find).
// DIR is the .ckpt directory itself, or a directory holding one; a relative
// DIR is taken from the working directory (cmdutil.Factory.Location).

// openFileStore opens the local .ckpt store, found as described above.
func openFileStore(f *cmdutil.Factory) (*filestore.Store, error) {
	if err := f.CheckLocation(); err != nil {
		return nil, err
	}
	dir := f.Location()
	if httpapi.IsURL(dir) {
		return nil, fmt.Errorf("%w: the store is the server %s; this command works on a local store directory: run it where the server's store is (or pass --store DIR)", ckpt.ErrInvalid, dir)
	}
	if isPGURL(dir) {
		return nil, fmt.Errorf("%w: the store is a PostgreSQL database; this command works on a local store directory (pass --store DIR)", ckpt.ErrInvalid)
	}
	return openFileStoreIn(f, dir)
}

// OpenFileStore opens the local file store for a command that works on
// one only (a server's tokens, its dashboard); the caller closes it.
func OpenFileStore(f *cmdutil.Factory) (*filestore.Store, error) { return openFileStore(f) }

// openFileStoreAt is the opener of a store directory (Stores' ""): dir
// given, or the nearest .ckpt/ when dir is "".
func openFileStoreAt(f *cmdutil.Factory, dir string) (ckpt.Store, error) {
	st, err := openFileStoreIn(f, dir)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return st, nil
}

// openFileStoreIn opens the filestore at dir, or the nearest one when dir
// is "", with the command's clock.
func openFileStoreIn(f *cmdutil.Factory, dir string) (*filestore.Store, error) {
	if dir == "" {
		found, err := filestore.Find(f.Env.WorkDir)
		if err != nil {
			return nil, err
		}
		dir = found
	}
	st, err := filestore.Open(dir)
	if errors.Is(err, ckpt.ErrNoStore) {
		// --store names a project directory, the one holding .ckpt/,
		// rather than the store itself: use its store.
		if inner, ierr := filestore.Open(filepath.Join(dir, filestore.StoreDirName)); ierr == nil {
			st, err = inner, nil
		}
	}
	if err != nil {
		return nil, err
	}
	st.SetClock(f.Now)
	return st, nil
}
