//go:build !unix

package filestore

// heldFiles is empty where lockHeld keeps no descriptors.
type heldFiles struct{}

// closeHeldFiles has nothing to close where lockHeld keeps no descriptors.
func (s *Store) closeHeldFiles() {}
