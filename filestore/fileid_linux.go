package filestore

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// oNoAtime is O_NOATIME (openQuiet).
const oNoAtime = unix.O_NOATIME

// idMask asks statx for the type, inode and size only: not the times.
const idMask = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_SIZE

// noStatx is set once statx failed with ENOSYS (a kernel before 4.11) or
// EPERM (a seccomp filter that predates it, as in Docker before 18.04;
// statx itself never returns EPERM): fstatat is used from then on.
var noStatx atomic.Bool

// idOf is the fileID of the open file fd, the file at path.
func idOf(fd int, path string) (fileID, error) {
	return statID(fd, "", unix.AT_EMPTY_PATH, path)
}

// statID is the fileID of name under dir (statx(2) with flags), without
// the file's times.
func statID(dir int, name string, flags int, path string) (fileID, error) {
	for !noStatx.Load() {
		var x unix.Statx_t
		err := unix.Statx(dir, name, flags, idMask, &x)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ENOSYS || err == unix.EPERM:
			noStatx.Store(true)
		case err != nil:
			return fileID{}, &os.PathError{Op: "statx", Path: path, Err: err}
		default:
			return fileID{
				dev:     unix.Mkdev(x.Dev_major, x.Dev_minor),
				ino:     x.Ino,
				regular: x.Mode&unix.S_IFMT == unix.S_IFREG,
				dir:     x.Mode&unix.S_IFMT == unix.S_IFDIR,
				size:    int64(x.Size),
			}, nil
		}
	}
	return fstatatID(dir, name, flags, path)
}
