//go:build !linux

package filestore

import (
	"bytes"
	"os"
)

// datasync makes f's data durable; fsync(2) where fdatasync is not offered.
func datasync(f *os.File) error { return f.Sync() }

// readFile reads a small file whole into buf[:0].
func readFile(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
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
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
