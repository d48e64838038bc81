//go:build unix

package filestore

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// idIn is the fileID of path (not following a final link), looked up
// through dfd (-1: by path; see atfile_unix.go).
func idIn(dfd int, path string) (fileID, error) {
	dir, name := dfd, filepath.Base(path)
	if dfd < 0 {
		dir, name = unix.AT_FDCWD, path
	}
	return statID(dir, name, unix.AT_SYMLINK_NOFOLLOW, path)
}

// idFollow is the fileID of the file path names, following links.
func idFollow(path string) (fileID, error) {
	return statID(unix.AT_FDCWD, path, 0, path)
}

// fstatatID is statID by fstatat(2), which reads the times too.
func fstatatID(dir int, name string, flags int, path string) (fileID, error) {
	var st unix.Stat_t
	var err error
	for {
		if name == "" {
			err = unix.Fstat(dir, &st) // idOf
		} else {
			err = unix.Fstatat(dir, name, &st, flags)
		}
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fileID{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return statIDOf(&st), nil
}

func statIDOf(st *unix.Stat_t) fileID {
	return fileID{
		dev:     uint64(st.Dev),
		ino:     st.Ino,
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG,
		dir:     st.Mode&unix.S_IFMT == unix.S_IFDIR,
		size:    st.Size,
	}
}

// openQuiet is openFile with O_NOATIME where the kernel allows it (the
// process owns the file): reading the file through it, as every append
// reads the history's last line and the lock file's marker, then leaves
// the access time alone instead of changing the inode (see fileID).
func openQuiet(path string, flags int) (int, error) {
	if oNoAtime != 0 {
		fd, err := openFile(path, flags|oNoAtime)
		if !errors.Is(err, unix.EPERM) {
			return fd, err
		}
	}
	return openFile(path, flags)
}
