//go:build unix

package filestore

import (
	"os"
	"syscall"
)

// openFile opens the file at path with flags (O_CLOEXEC and O_NOFOLLOW
// added, mode 0644 if created) by a plain open(2), retried when
// interrupted: no runtime poller registration. The error is a linkError for
// a symbolic link at path, else an *os.PathError.
func openFile(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o644)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.ELOOP:
			return -1, linkError(path)
		case err != nil:
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// writeAll writes all of data to fd at its current offset, retrying
// interrupted and short writes. The error is an *os.PathError naming path;
// fd stays open either way.
func writeAll(fd int, path string, data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		data = data[n:]
	}
	return nil
}
