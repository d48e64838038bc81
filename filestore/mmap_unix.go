//go:build unix

package filestore

import (
	"os"
	"syscall"
)

// mmapIndex maps the file at path read-only. An empty file maps to an
// empty slice.
func mmapIndex(path string) ([]byte, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Size == 0 {
		return []byte{}, nil
	}
	b, err := syscall.Mmap(fd, 0, int(st.Size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return b, nil
}

// unmapIndex releases a mapping of mmapIndex.
func unmapIndex(b []byte) {
	if len(b) > 0 {
		syscall.Munmap(b)
	}
}
