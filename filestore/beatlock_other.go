//go:build !unix

package filestore

import "context"

// lockBeat serializes f's beats where the beat file cannot be flock'ed in
// place: through the checkpoint's lock, which an append holds too (see
// beatlock_unix.go for the contract). created is always false.
func (s *Store) lockBeat(ctx context.Context, f files) (created bool, release func(), err error) {
	if err := beatable(f); err != nil {
		return false, nil, err
	}
	unlock, err := s.lockCheckpoint(ctx, f, false)
	return false, unlock, err
}
