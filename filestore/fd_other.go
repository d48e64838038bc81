//go:build unix && !linux

package filestore

import (
	"os"
	"syscall"
)

// openFile opens the file at path with flags (O_CLOEXEC added, mode 0644 if
// created) by a plain open(2), retried when interrupted. The error is an
// *os.PathError. (The journal works on file descriptors on every system.)
func openFile(path string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(path, flags|syscall.O_CLOEXEC, 0o644)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return -1, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return fd, nil
	}
}

// writeAll writes all of data to fd, retrying interrupted and short writes.
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
