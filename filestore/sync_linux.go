package filestore

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// datasync makes f's data durable with fdatasync(2): enough for an append,
// whose new size is metadata fdatasync must write, and cheaper than fsync.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}

// readFile reads a small file whole into buf[:0] (growing it as needed)
// with plain open, read and close system calls: unlike os.ReadFile it skips
// registering the file with the runtime poller and an fstat, which matters
// when List reads 10,000 state files.
func readFile(path string, buf []byte) ([]byte, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) < cap(buf) {
			// A short read of a regular file is its end. (A state file
			// being overwritten meanwhile may read torn either way; it
			// checks itself, and a torn read is not used.)
			return buf, nil
		}
	}
}

// fileSize returns the size of the file at path, without allocating. A
// symbolic link is refused (linkError).
func fileSize(path string) (int64, error) {
	_, size, err := fileIdentity(path)
	return size, err
}

// appendSync appends data to the file at path (creating it) with one write
// and fdatasync, using plain system calls: os.OpenFile would add five more
// (the runtime poller's fcntl and epoll_ctl calls) to every update.
func appendSync(path string, data []byte) error {
	return appendSyncWhile(path, data, nil)
}

// openAsLeft opens the history at path for appending if it is exactly as
// this Store left it: the same inode (opened without following a link),
// size bytes long, ending with tail. The descriptor serves both the check
// and the append (one open instead of two). fd is -1 when it is not.
func openAsLeft(path string, ino uint64, size int64, tail []byte) (fd int, ok bool) {
	if int64(len(tail)) > size {
		return -1, false
	}
	fd, err := openQuiet(path, syscall.O_RDWR|syscall.O_APPEND)
	if err != nil {
		return -1, false
	}
	buf := make([]byte, len(tail))
	if st, err := idOf(fd, path); err == nil && st.regular && st.ino == ino && st.size == size {
		if n, err := syscall.Pread(fd, buf, size-int64(len(tail))); err == nil && n == len(buf) && string(buf) == string(tail) {
			return fd, true
		}
	}
	syscall.Close(fd)
	return -1, false
}

// reuseAsLeft is openAsLeft through hfd, the history this Store kept open
// from its last append (-1: none, open it), looked up through dfd, its
// directory as the held lock has it open: hfd is used when the path still
// names the file of inode ino, of size bytes ending in tail (one lstat and
// one pread instead of an open, fstat, pread and close), and closed
// otherwise.
func reuseAsLeft(dfd, hfd int, path string, ino uint64, size int64, tail []byte) (fd int, ok bool) {
	if hfd < 0 {
		return openAsLeft(path, ino, size, tail)
	}
	if st, err := idIn(dfd, path); err == nil && st.regular && st.ino == ino && st.size == size && int64(len(tail)) <= size {
		buf := make([]byte, len(tail))
		if n, err := syscall.Pread(hfd, buf, size-int64(len(tail))); err == nil && n == len(buf) && string(buf) == string(tail) {
			return hfd, true
		}
	}
	syscall.Close(hfd)
	return -1, false
}

// appendSyncWhile is appendSync running during (if not nil, once, whatever
// fails) while the line's writeback is in flight (writeSyncWhile).
func appendSyncWhile(path string, data []byte, during func()) error {
	fd, err := openFile(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT)
	if err != nil {
		runOnce(during)
		return err
	}
	if err := writeSyncWhile(fd, path, data, during); err != nil {
		syscall.Close(fd)
		return err
	}
	if err := syscall.Close(fd); err != nil {
		return &os.PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// writeSyncWhile writes data to fd (of the file at path) with one write
// and makes it durable (fdatasync); fd stays open. When during is not nil
// it runs once, whatever fails, while the line's writeback is in flight:
// after the write, sync_file_range starts the writeback without waiting
// (an error there only loses the head start), during runs, and fdatasync
// then waits for the writeback and commits the new size. The write comes
// first: what during does never precedes the line in the file.
func writeSyncWhile(fd int, path string, data []byte, during func()) error {
	if err := writeAll(fd, path, data); err != nil {
		runOnce(during)
		return err
	}
	if during != nil {
		unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
		during()
	}
	return fdatasyncFD(fd, path)
}

// fdatasyncFD is fdatasync(2) of fd (the file at path), retried when
// interrupted.
func fdatasyncFD(fd int, path string) error {
	for {
		err := syscall.Fdatasync(fd)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fdatasync", Path: path, Err: err}
		}
		return nil
	}
}

// fileIdentity returns the inode number and size of the file at path. A
// symbolic link is refused (linkError).
func fileIdentity(path string) (ino uint64, size int64, err error) {
	var st syscall.Stat_t
	for {
		err := syscall.Lstat(path, &st)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, 0, &os.PathError{Op: "stat", Path: path, Err: err}
		case st.Mode&syscall.S_IFMT == syscall.S_IFLNK:
			return 0, 0, linkError(path)
		}
		return st.Ino, st.Size, nil
	}
}

// modTime returns the modification time of the regular file at path, or
// zero (a symbolic link is not followed: zero).
func modTime(path string) time.Time {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return time.Time{}
	}
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC()
}

// overwrite writes data over the file at path in place (creating it), then
// cuts it to len(data): no new inode, no rename, no fsync. It is for a
// checksummed cache only: a reader may meet a mix of old and new bytes, or a
// crash may leave one, and must take its checksum failure as "no cache".
func overwrite(path string, data []byte) error { return overwriteIn(-1, path, data) }

// overwriteIn is overwrite through dfd, the directory of path as a held
// lock has it open (-1: by path).
func overwriteIn(dfd int, path string, data []byte) error {
	fd, err := openFileIn(dfd, path, syscall.O_WRONLY|syscall.O_CREAT)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := pwriteFull(fd, path, data); err != nil {
		return err
	}
	// Cut only when the file was longer: a truncate to the same size would
	// still be a journalled inode change.
	st, err := idOf(fd, path)
	if err != nil {
		return err
	}
	if st.size > int64(len(data)) {
		if err := syscall.Ftruncate(fd, int64(len(data))); err != nil {
			return &os.PathError{Op: "truncate", Path: path, Err: err}
		}
	}
	return nil
}

// writePlain writes data to the file at path, created or truncated, with
// no temporary file, rename or fsync: for checksummed backups only, which a
// reader skips when torn.
func writePlain(path string, data []byte) error {
	fd, err := openFile(path, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_TRUNC)
	if err != nil {
		return err
	}
	if err := writeAll(fd, path, data); err != nil {
		syscall.Close(fd)
		return err
	}
	return syscall.Close(fd)
}
