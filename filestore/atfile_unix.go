//go:build unix

package filestore

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// A checkpoint's files are reached from its directory's descriptor (dfd),
// the one its held lock has open and checked to be the directory at the
// checkpoint's path, one path component each instead of walking the
// store's whole path again: with 8 components, an lstat of a name in the
// directory took 1.4 µs against 4.0 µs by the full path, an open and close
// 6.8 µs against 15.2 µs (at load 25). These helpers take dfd -1 to mean
// by path; path is always the file's full path (its base name is looked up
// under dfd, and errors name the path).

// lstatIn is lstat(2) of path, through dfd.
func lstatIn(dfd int, path string, st *unix.Stat_t) error {
	for {
		var err error
		if dfd < 0 {
			err = unix.Lstat(path, st)
		} else {
			err = unix.Fstatat(dfd, filepath.Base(path), st, unix.AT_SYMLINK_NOFOLLOW)
		}
		if err != unix.EINTR {
			return err
		}
	}
}

// existsIn reports whether anything is at path (a link included), through
// dfd.
func existsIn(dfd int, path string) bool {
	var st unix.Stat_t
	return lstatIn(dfd, path, &st) == nil
}

// openFileIn is openFile through dfd.
func openFileIn(dfd int, path string, flags int) (int, error) {
	if dfd < 0 {
		return openFile(path, flags)
	}
	for {
		fd, err := unix.Openat(dfd, filepath.Base(path), flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ELOOP:
			return -1, linkError(path)
		case err != nil:
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}
