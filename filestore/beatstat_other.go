//go:build !linux

package filestore

import (
	"os"
	"time"
)

// beatStat returns the modification time and size of the regular file at
// path, or zero.
func beatStatIn(_ int, path string) (time.Time, int64) { return beatStat(path) }

func beatStat(path string) (time.Time, int64) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}, 0
	}
	return fi.ModTime().UTC(), fi.Size()
}
