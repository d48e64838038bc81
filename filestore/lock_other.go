//go:build !unix

package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// oNoFollow is not offered here; paths are checked with Lstat instead.
const oNoFollow = 0

func isLinkErr(error) bool { return false }

// lockCheckpoint takes f's exclusive lock (its lock file) and returns its
// release; see lock_unix.go for the contract. Where directories cannot be
// locked, the lock file is all there is.
func (s *Store) lockHeld(ctx context.Context, f files, create bool) (heldLock, error) {
	unlock, err := s.lockCheckpoint(ctx, f, create)
	return heldLock{lockFD: -1, dirFD: -1, histFD: -1, release: func(int) { unlock() }}, err
}

func (s *Store) lockCheckpoint(ctx context.Context, f files, create bool) (func(), error) {
	for {
		if create {
			if err := os.MkdirAll(f.dir, 0o755); err != nil {
				return nil, fmt.Errorf("filestore: %s: %w", f.id, err)
			}
		}
		if err := realDir(f.dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if create {
					continue
				}
				return nil, notFound(f.id)
			}
			return nil, err
		}
		fl := flock.New(f.lock(), flock.SetPermissions(0o644))
		if _, err := fl.TryLockContext(ctx, time.Millisecond); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("filestore: locking %s: %w", f.id, err)
		}
		held, err1 := fl.Stat()
		now, err2 := os.Lstat(f.lock())
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return func() { fl.Unlock() }, nil
		}
		fl.Unlock()
		if _, err := os.Lstat(f.dir); !create && errors.Is(err, fs.ErrNotExist) {
			return nil, notFound(f.id)
		}
	}
}

func lockShared(dir string) (func(), bool, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	return func() {}, false, nil
}

func tryLockDir(string, bool) (func(), bool, error) { return func() {}, false, nil }

func setTimes(path string, at time.Time) error {
	if err := realFile(path); err != nil {
		return err
	}
	return os.Chtimes(path, at, at)
}

// heldByWriter is always false here: Beat creates its file without a
// temporary name on these systems.
func heldByWriter(string) bool { return false }
