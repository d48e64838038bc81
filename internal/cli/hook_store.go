package cli

import (
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// hookStoreDir is the filestore directory a hook uses: --store or
// CKPT_STORE, else the nearest .ckpt walking up from start.
func hookStoreDir(f *cmdutil.Factory, start string) (string, error) {
	if dir := f.Location(); dir != "" {
		return dir, nil
	}
	return filestore.Find(start)
}
