package filestore

import (
	"time"

	"golang.org/x/sys/unix"
)

// listDir is the checkpoints directory, opened once for a listing, so
// that each checkpoint's history and beat file are stat'ed by a short
// relative path (fstatat: two components) instead of by the store's whole
// path again: at 100,000 checkpoints a listing makes 200,000 of them, and
// the kernel's path walk is most of each one's cost.
type listDir struct {
	fd   int    // -1: use paths
	base string // the checkpoints directory's path
}

// openListDir opens the checkpoints directory of s for listing; on any
// failure the listing stats by path as before.
func (s *Store) openListDir() listDir {
	base := s.dir + sep + checkpointsDir
	fd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return listDir{fd: -1, base: base}
	}
	return listDir{fd: fd, base: base}
}

func (d listDir) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
	}
}

// lstat stats name (a file of checkpoint id) without following a final
// link. missing is true when it does not exist.
func (d listDir) lstat(id, name string) (st unix.Stat_t, missing bool, err error) {
	rel := dirName(id) + sep + name
	for {
		if d.fd >= 0 {
			err = unix.Fstatat(d.fd, rel, &st, unix.AT_SYMLINK_NOFOLLOW)
		} else {
			err = unix.Lstat(d.base+sep+rel, &st)
		}
		if err != unix.EINTR {
			return st, err == unix.ENOENT, err
		}
	}
}

// historySize returns the size of id's history. missing is true when it
// does not exist; ok is false when it is anything but a regular file one
// stat can measure (the caller then reads the checkpoint's files, which
// report a link or damage as they do everywhere).
func (d listDir) historySize(id string) (size int64, missing, ok bool) {
	st, missing, err := d.lstat(id, historyName)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return 0, missing, false
	}
	return st.Size, false, true
}

// beat returns the modification time and size of id's beat file, or zero
// when it is not a regular file (as beatStat).
func (d listDir) beat(id string) (time.Time, int64) {
	st, _, err := d.lstat(id, beatName)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return time.Time{}, 0
	}
	return time.Unix(st.Mtim.Sec, st.Mtim.Nsec).UTC(), st.Size
}

// exists reports whether name of checkpoint id exists (a link too: reading
// it then reports the link).
func (d listDir) exists(id, name string) bool {
	_, _, err := d.lstat(id, name)
	return err == nil
}
