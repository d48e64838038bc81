//go:build !linux

package filestore

import (
	"bytes"
	"os"
	"time"
)

// datasync makes f's data durable; fsync(2) where fdatasync is not offered.
func datasync(f *os.File) error { return f.Sync() }

// readFile reads a small file whole into buf[:0].
func readFile(path string, buf []byte) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := bytes.NewBuffer(buf[:0])
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// fileSize returns the size of the file at path.
func fileSize(path string) (int64, error) {
	if err := realFile(path); err != nil {
		return 0, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// appendSync appends data to the file at path (creating it) and syncs it.
func appendSync(path string, data []byte) error {
	f, err := openNoFollow(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openAsLeft reports whether the history at path is exactly as this
// Store left it (see the Linux version); it keeps no descriptor here.
func openAsLeft(path string, ino uint64, size int64, tail []byte) (fd int, ok bool) {
	got, n, err := fileIdentity(path)
	return -1, err == nil && got == ino && n == size && endsWith(path, size, tail)
}

// reuseAsLeft is openAsLeft; hfd is always -1 where openAsLeft keeps no
// descriptor, and closed otherwise.
func reuseAsLeft(_, hfd int, path string, ino uint64, size int64, tail []byte) (fd int, ok bool) {
	closeFD(hfd)
	return openAsLeft(path, ino, size, tail)
}

// writeSync writes data to fd and syncs it; unused where openAsLeft keeps
// no descriptor.
func writeSync(fd int, path string, data []byte) error {
	f := os.NewFile(uintptr(fd), path)
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Sync()
}

// fileIdentity returns 0 for the inode number where it is not portable to
// read it, which turns off the Store's cache of its own writes.
func fileIdentity(path string) (ino uint64, size int64, err error) {
	if err := realFile(path); err != nil {
		return 0, 0, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, 0, err
	}
	return 0, fi.Size(), nil
}

// endsWith reports whether the file at path, of the given size, ends with
// tail.
func endsWith(path string, size int64, tail []byte) bool {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil || int64(len(tail)) > size {
		return false
	}
	defer f.Close()
	buf := make([]byte, len(tail))
	n, err := f.ReadAt(buf, size-int64(len(tail)))
	return err == nil && n == len(buf) && bytes.Equal(buf, tail)
}

// modTime returns the modification time of the file at path, or zero.
func modTime(path string) time.Time {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}
	}
	return fi.ModTime().UTC()
}

// overwrite writes data over the file at path in place (creating it), then
// cuts it to len(data); for a checksummed cache only (see sync_linux.go).
func overwriteIn(_ int, path string, data []byte) error { return overwrite(path, data) }

func overwrite(path string, data []byte) error {
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writePlain writes data to the file at path, created or truncated; for
// checksummed backups only.
func writePlain(path string, data []byte) error {
	f, err := openNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// appendSyncWhile is appendSync, then during (no overlap here).
func appendSyncWhile(path string, data []byte, during func()) error {
	err := appendSync(path, data)
	runOnce(during)
	return err
}

// writeSyncWhile is writeSync, then during (no overlap here).
func writeSyncWhile(fd int, path string, data []byte, during func()) error {
	err := writeSync(fd, path, data)
	runOnce(during)
	return err
}
