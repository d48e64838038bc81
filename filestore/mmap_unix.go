//go:build unix

package filestore

import (
	"os"
	"syscall"
)

// mmapIndex maps the file at path read-only and returns its identity. An
// empty file maps to an empty slice.
func mmapIndex(path string) ([]byte, fileIdent, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, fileIdent{}, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, fileIdent{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	id := fileIdent{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size}
	if st.Size == 0 {
		return []byte{}, id, nil
	}
	b, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fileIdent{}, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return b, id, nil
}

// fileIdent tells one file from another: the index is only ever replaced
// by rename, so the same device, inode and size (and header) is the same
// index.
type fileIdent struct {
	dev, ino uint64
	size     int64
}

// unmapIndex releases a mapping of mmapIndex.
func unmapIndex(b []byte) {
	if len(b) > 0 {
		syscall.Munmap(b)
	}
}
