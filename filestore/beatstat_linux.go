package filestore

import (
	"syscall"
	"time"
)

// beatStat returns the modification time and size of the regular file at
// path with one lstat, or zero.
func beatStat(path string) (time.Time, int64) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return time.Time{}, 0
	}
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), st.Size
}
