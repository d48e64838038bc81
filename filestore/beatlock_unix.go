//go:build unix

package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// beatWaits, when set (by tests only), runs when a Beat finds the beat
// file's lock held and is about to wait for it.
var beatWaits func()

// lockBeat takes the exclusive flock of f's beat file, the lock that makes
// a Beat's read, merge and write one step: without it, two beats racing
// both read the old record and the later writer drops the other's beat
// (its time moved back, its presence lost). It creates the beat file if
// missing, only for a checkpoint whose directory is real and whose history
// is not empty (else notFound); created says this call made it (empty: it
// holds no beat yet). The locked file is checked to still be the one at
// the path (a Delete or a creator's cleanup may have moved it).
func (s *Store) lockBeat(ctx context.Context, f files) (created bool, release func(), err error) {
	for {
		created = false
		fd, err := openFile(f.beat(), syscall.O_RDWR)
		if errors.Is(err, fs.ErrNotExist) {
			if err := beatable(f); err != nil {
				return false, nil, err
			}
			fd, err = openFile(f.beat(), syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			created = true
		}
		if err != nil {
			return false, nil, fmt.Errorf("filestore: %s: opening the beat file: %w", f.id, err)
		}
		err = flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == syscall.EWOULDBLOCK {
			if beatWaits != nil {
				beatWaits()
			}
			err = waitFlock(ctx, fd)
		}
		if err != nil {
			syscall.Close(fd)
			return false, nil, fmt.Errorf("filestore: %s: locking the beat file: %w", f.id, err)
		}
		if same, err := sameFileAt(fd, f.beat()); err != nil || !same {
			syscall.Close(fd)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return false, nil, err
			}
			continue
		}
		return created, func() { syscall.Close(fd) }, nil
	}
}

// sameFileAt reports whether the file open at fd is the one at path.
func sameFileAt(fd int, path string) (bool, error) {
	var held, now syscall.Stat_t
	if err := syscall.Fstat(fd, &held); err != nil {
		return false, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if err := syscall.Lstat(path, &now); err != nil {
		return false, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return held.Dev == now.Dev && held.Ino == now.Ino, nil
}
