//go:build !linux

package filestore

import (
	"errors"
	"io/fs"
	"os"
	"time"
)

// listDir is the checkpoints directory a listing stats files in (by path
// on this system; see liststat_linux.go).
type listDir struct{ s *Store }

func (s *Store) openListDir() listDir { return listDir{s: s} }

func (d listDir) close() {}

// historySize returns the size of id's history (see liststat_linux.go).
func (d listDir) historySize(id string) (size int64, missing, ok bool) {
	fi, err := os.Lstat(d.s.files(id).history())
	if err != nil || !fi.Mode().IsRegular() {
		return 0, errors.Is(err, fs.ErrNotExist), false
	}
	return fi.Size(), false, true
}

// beat returns the modification time and size of id's beat file.
func (d listDir) beat(id string) (time.Time, int64) {
	return beatStat(d.s.files(id).beat())
}

// exists reports whether name of checkpoint id exists.
func (d listDir) exists(id, name string) bool {
	_, err := os.Lstat(d.s.files(id).dir + sep + name)
	return err == nil
}
