package filestore

import (
	"path/filepath"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/storetest"
)

// newStore initialises a store in a fresh temporary directory.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Init(filepath.Join(t.TempDir(), StoreDirName), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store { return newStore(t, Options{}) })
}

// TestConformanceBackupEveryRevision runs the suite with a backup at every
// revision, so that reads of old revisions and key replays go through
// backups.
func TestConformanceBackupEveryRevision(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store { return newStore(t, Options{BackupEvery: 1, BackupKeep: 3}) })
}
