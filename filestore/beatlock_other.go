//go:build !unix

package filestore

import (
	"context"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// lockBeat serializes f's beats where the beat file cannot be flock'ed in
// place: through the checkpoint's lock, which an append holds too (see
// beatlock_unix.go for the contract). created is always false.
func (s *Store) lockBeat(ctx context.Context, f files) (bf *beatFile, created bool, err error) {
	if err := beatable(f); err != nil {
		return nil, false, err
	}
	unlock, err := s.lockCheckpoint(ctx, f, false)
	if err != nil {
		return nil, false, err
	}
	return &beatFile{f: f, unlock: unlock}, false, nil
}

// beatFile is a checkpoint's beat file under its checkpoint's lock, read
// and written by its path.
type beatFile struct {
	f      files
	unlock func()
}

func (b *beatFile) read() (time.Time, ckpt.Presence) { return readLiveness(b.f) }

func (b *beatFile) write(path string, data []byte) error { return overwrite(path, data) }

func (b *beatFile) release() { b.unlock() }
