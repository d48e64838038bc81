//go:build !linux

package filestore

import "os"

// datasync makes f's data durable; fsync(2) where fdatasync is not offered.
func datasync(f *os.File) error { return f.Sync() }

// readFile reads a small file whole.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
