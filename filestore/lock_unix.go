//go:build unix

package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// oNoFollow makes an open fail (ELOOP) when the last element of the path is
// a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// isLinkErr reports whether err is an open refused by oNoFollow.
func isLinkErr(err error) bool { return errors.Is(err, syscall.ELOOP) }

// lockCheckpoint takes f's exclusive lock and returns its release. With
// create it makes the checkpoint's directory first; without, a missing
// checkpoint fails with ckpt.ErrNotFound. It waits until the lock is free
// (the kernel releases a dead holder's lock, so the wait is bounded by a live
// writer's work) or ctx is done: then it returns ctx.Err().
//
// Two flocks are taken, in this order: the lock file's, which other
// programs may take to hold writers off (the hooks probe it), and the
// checkpoint directory's, which is what excludes writers from each other.
// A lock file can be deleted or replaced under its holder, letting the next
// writer lock a new file; the directory cannot be swapped without moving the
// checkpoint itself, which the check after locking notices. The directory
// is opened without following a link, so a symlinked checkpoint directory
// is refused before anything is created through it.
func (s *Store) lockCheckpoint(ctx context.Context, f files, create bool) (func(), error) {
	h, err := s.lockHeld(ctx, f, create)
	if err != nil {
		return nil, err
	}
	return h.unlock, nil
}

// lockHeld is lockCheckpoint returning the descriptors it holds.
func (s *Store) lockHeld(ctx context.Context, f files, create bool) (heldLock, error) {
	if h, ok := s.takeHeldFiles(f.id); ok {
		if held, ok, err := s.relock(ctx, f, h); ok || err != nil {
			return held, err
		}
	}
	gen := s.heldGeneration()
	for {
		if create {
			if err := os.MkdirAll(f.dir, 0o755); err != nil {
				return heldLock{}, fmt.Errorf("filestore: %s: %w", f.id, err)
			}
		}
		dfd, err := openDir(f.dir)
		if errors.Is(err, fs.ErrNotExist) {
			if create {
				continue // the directory was moved away meanwhile
			}
			return heldLock{}, notFound(f.id)
		}
		if err != nil {
			return heldLock{}, err
		}
		lfd, err := openQuiet(f.lock(), syscall.O_RDWR|syscall.O_CREAT)
		if err != nil {
			syscall.Close(dfd)
			if errors.Is(err, fs.ErrNotExist) {
				continue // moved away after we opened it; look again
			}
			return heldLock{}, fmt.Errorf("filestore: locking %s: %w", f.id, err)
		}
		if err := waitFlock(ctx, lfd); err != nil {
			syscall.Close(lfd)
			syscall.Close(dfd)
			if ctx.Err() != nil {
				return heldLock{}, ctx.Err()
			}
			return heldLock{}, fmt.Errorf("filestore: locking %s: %w", f.id, err)
		}
		if err := waitFlock(ctx, dfd); err != nil {
			syscall.Close(lfd)
			syscall.Close(dfd)
			if ctx.Err() != nil {
				return heldLock{}, ctx.Err()
			}
			return heldLock{}, fmt.Errorf("filestore: locking %s: %w", f.id, err)
		}
		// A Delete may have moved the directory away while we waited: then
		// we hold the lock of a directory no one else will look at.
		same, dev, ino, err := isDirAt(dfd, f.dir)
		if same {
			h := heldFiles{dfd: dfd, lfd: lfd, dev: dev, ino: ino, hfd: -1, gen: gen}
			var st syscall.Stat_t
			if syscall.Fstat(lfd, &st) == nil {
				h.lockIno = st.Ino
			}
			return s.holding(f.id, h), nil
		}
		syscall.Close(dfd)
		syscall.Close(lfd)
		if !create && errors.Is(err, fs.ErrNotExist) {
			return heldLock{}, notFound(f.id)
		}
	}
}

// lockShared takes a shared lock on the directory at dir, as check does to
// keep writers off while it reads. gone is true (and no lock is held) when
// the directory is not there, or was moved away while waiting.
func lockShared(dir string) (release func(), gone bool, err error) {
	dfd, err := openDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := flock(dfd, syscall.LOCK_SH); err != nil {
		syscall.Close(dfd)
		return nil, false, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	if same, _, _, _ := isDirAt(dfd, dir); !same {
		syscall.Close(dfd)
		return nil, true, nil
	}
	return func() { syscall.Close(dfd) }, false, nil
}

// tryLockDir takes a lock on the directory at dir without waiting: busy is
// true when someone else holds one that conflicts. Deletes hold tmp/ locked
// (shared) until their trash is gone, so check and repair tell a delete in
// progress from an interrupted one.
func tryLockDir(dir string, exclusive bool) (release func(), busy bool, err error) {
	dfd, err := openDir(dir)
	if err != nil {
		return nil, false, err
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := flock(dfd, how|syscall.LOCK_NB); err != nil {
		syscall.Close(dfd)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return func() { syscall.Close(dfd) }, false, nil
}

// openDir opens the directory at path for locking, refusing a symbolic
// link. The error is a linkError for a link.
func openDir(path string) (int, error) {
	return openFile(path, syscall.O_RDONLY|syscall.O_DIRECTORY)
}

// flock is flock(2), retried when interrupted.
func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// isDirAt reports whether fd is the directory now at path (not a link).
func isDirAt(fd int, path string) (same bool, dev, ino uint64, err error) {
	var held, now syscall.Stat_t
	if err := syscall.Fstat(fd, &held); err != nil {
		return false, 0, 0, err
	}
	if err := syscall.Lstat(path, &now); err != nil {
		return false, 0, 0, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	return held.Dev == now.Dev && held.Ino == now.Ino, uint64(held.Dev), held.Ino, nil
}

// setTimes sets the access and modification times of the file at path, a
// symbolic link itself rather than its target.
func setTimes(path string, at time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(at.UnixNano())}
	for {
		err := unix.UtimesNanoAt(unix.AT_FDCWD, path, ts, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return &os.PathError{Op: "utimes", Path: path, Err: err}
		}
		return nil
	}
}

// heldByWriter reports whether the regular file at path is flock'ed by
// someone: a temporary file a live Beat is creating holds its lock from
// its creation to its unlink (createLocked), so check and repair leave it
// alone rather than take it for a crashed write's leftover. It opens
// without following links and without blocking (a FIFO planted in a store
// must not hang check); a file that cannot be opened is not held.
func heldByWriter(path string) bool {
	fd, err := openFile(path, syscall.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	return flock(fd, syscall.LOCK_SH|syscall.LOCK_NB) == syscall.EWOULDBLOCK
}
