package cli

import (
	"github.com/ckpt-dev/ckpt/filestore"
)

// hookStoreDir is the filestore directory a hook uses: --store or
// CKPT_STORE, else the nearest .ckpt walking up from start.
func (f *factory) hookStoreDir(start string) (string, error) {
	if dir := f.givenStoreDir(); dir != "" {
		return dir, nil
	}
	return filestore.Find(start)
}
