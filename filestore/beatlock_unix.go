//go:build unix

package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/ckpt-dev/ckpt"
	"golang.org/x/sys/unix"
)

// beatWaits, when set (by tests only), runs when a Beat finds the beat
// file's lock held and is about to wait for it.
var beatWaits func()

// beatCreated, when set (by tests only), runs when a Beat has created the
// beat file at path, before it reads or writes it.
var beatCreated func(path string)

// beatTempLocked, when set (by tests only), runs when a first Beat holds
// its new beat file locked under the temporary name tmp, before linking it.
var beatTempLocked func(tmp string)

// lockBeat takes the exclusive flock of f's beat file, the lock that makes
// a Beat's read, merge and write one step: without it, two beats racing
// both read the old record and the later writer drops the other's beat
// (its time moved back, its presence lost). It creates the beat file if
// missing, only for a checkpoint whose directory is real and whose history
// is not empty (else notFound); created says this call made it (empty: it
// holds no beat yet). The locked file is checked to still be the one at
// the path (a Delete or a creator's cleanup may have moved it).
func (s *Store) lockBeat(ctx context.Context, f files) (bf *beatFile, created bool, err error) {
	for {
		created = false
		fd, err := openFile(f.beat(), syscall.O_RDWR)
		if errors.Is(err, fs.ErrNotExist) {
			if err := beatable(f); err != nil {
				return nil, false, err
			}
			fd, err = createLocked(f.beat())
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			created = true
			if err == nil && beatCreated != nil {
				beatCreated(f.beat())
			}
		}
		if err != nil {
			return nil, false, fmt.Errorf("filestore: %s: opening the beat file: %w", f.id, err)
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
			return nil, false, fmt.Errorf("filestore: %s: locking the beat file: %w", f.id, err)
		}
		if same, err := sameFileAt(fd, f.beat()); err != nil || !same {
			syscall.Close(fd)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, false, err
			}
			continue
		}
		return &beatFile{fd: fd}, created, nil
	}
}

// createLocked creates the empty file at path already flock'ed: under a
// temporary name first, locked, then linked to path (fs.ErrExist when
// path exists meanwhile). Created at path and then locked, the file was
// open to another Beat in between, which took the empty file for an older
// ckpt's plain beat at its modification time, the moment of creation: a
// beat with an older time then recorded nothing, and a record it wrote
// was overwritten by the creator, which does not read. A crash in between
// leaves a temporary file that check reports and repair removes; while
// its creator lives the file is locked, and both leave it alone
// (heldByWriter).
func createLocked(path string) (int, error) {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.tmp-%d-%016x", filepath.Base(path), os.Getpid(), rand.Uint64()))
	fd, err := openFile(tmp, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
	if err != nil {
		return -1, err
	}
	defer syscall.Unlink(tmp)
	if err := flock(fd, syscall.LOCK_EX); err != nil {
		syscall.Close(fd)
		return -1, &os.PathError{Op: "flock", Path: tmp, Err: err}
	}
	if beatTempLocked != nil {
		beatTempLocked(tmp)
	}
	if err := syscall.Link(tmp, path); err != nil {
		syscall.Close(fd)
		return -1, &os.PathError{Op: "link", Path: path, Err: err}
	}
	return fd, nil
}

// beatFile is a beat file open and locked by lockBeat: the Beat reads and
// rewrites the record through it, not by opening the path again.
type beatFile struct {
	fd   int
	size int64 // as read
}

// read returns the record's beat time and presence as readLiveness does
// for the path.
func (b *beatFile) read() (time.Time, ckpt.Presence) {
	var st unix.Stat_t
	if unix.Fstat(b.fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return time.Time{}, ckpt.Presence{}
	}
	b.size = st.Size
	at := time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC()
	if st.Size == 0 {
		return at, ckpt.Presence{} // an empty beat file (a plain beat) holds no presence
	}
	buf := make([]byte, st.Size)
	n, err := syscall.Pread(b.fd, buf, 0)
	if err != nil {
		return at, ckpt.Presence{}
	}
	seen, p := parseBeat(buf[:n])
	if !seen.IsZero() {
		at = seen
	}
	return at, p
}

// write replaces the record with data in place (see overwrite).
func (b *beatFile) write(path string, data []byte) error {
	if err := pwriteFull(b.fd, path, data); err != nil {
		return err
	}
	if b.size > int64(len(data)) {
		if err := syscall.Ftruncate(b.fd, int64(len(data))); err != nil {
			return &os.PathError{Op: "truncate", Path: path, Err: err}
		}
	}
	b.size = int64(len(data))
	return nil
}

// release unlocks and closes the beat file.
func (b *beatFile) release() { syscall.Close(b.fd) }

// pwriteFull writes all of data at offset 0 of fd.
func pwriteFull(fd int, path string, data []byte) error {
	for off := 0; off < len(data); {
		n, err := syscall.Pwrite(fd, data[off:], int64(off))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		off += n
	}
	return nil
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
