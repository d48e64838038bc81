package filestore

import (
	"time"

	"golang.org/x/sys/unix"
)

// beatStatIn returns the modification time and size of the regular file
// at path with one lstat, or zero, through dfd, the directory of path as a
// held lock has it open (-1: by path).
func beatStatIn(dfd int, path string) (time.Time, int64) {
	var st unix.Stat_t
	if err := lstatIn(dfd, path, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return time.Time{}, 0
	}
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), st.Size
}
