package filestore

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// jfast is a Store's cache of its journal files for Append's hot path: the
// lock file open once (flock'ed per append, behind mu, since a flock is
// per open file and would not exclude this process's own goroutines), the
// boot check done once (a boot ID changes only across a reboot, which no
// process outlives), and the active segment open while its inode stays.
type jfast struct {
	lockFD  int
	bootOK  bool
	actFD   int
	actIno  uint64
	actDev  uint64
	start   int64
	hlen    int64
	end     int64 // the segment's end after this Store's last line in it
	started bool
}

// fastAppend appends line to the journal under the journal lock.
func (s *Store) fastAppend(line []byte) error {
	s.jmu.Lock()
	defer s.jmu.Unlock()
	c := &s.jf
	if !c.started {
		*c = jfast{lockFD: -1, actFD: -1, started: true}
	}
	if c.lockFD < 0 {
		fd, err := s.journal().openLock(true)
		if err != nil {
			return err
		}
		c.lockFD = fd
	}
	// What a new process reads once is read before the lock, so that the
	// journal lock is held for a few calls: 64 processes on two cores
	// queue behind a holder the scheduler preempts.
	thisBoot()
	if c.actFD < 0 {
		s.preopenActive(c)
	}
	if err := flock(c.lockFD, syscall.LOCK_EX); err != nil {
		return &os.PathError{Op: "flock", Path: s.journal().lock(), Err: err}
	}
	defer flock(c.lockFD, syscall.LOCK_UN)
	if !c.bootOK {
		if err := s.readyLocked(&jlock{fd: c.lockFD}); err != nil {
			return err
		}
		c.bootOK = true
	}
	return s.appendActive(c, line)
}

// appendActive writes line at the end of the active segment, through the
// cached descriptor when the segment is still the one it has open. The
// caller holds the journal lock.
func (s *Store) appendActive(c *jfast, line []byte) error {
	j := s.journal()
	st, err := idFollow(j.active())
	if err != nil || st.size > segmentMax {
		c.closeActive()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		_, err := j.appendEntriesRaw(line) // creates or rotates
		return err
	}
	if c.actFD < 0 || st.ino != c.actIno || st.dev != c.actDev {
		c.closeActive()
		fd, err := openFile(j.active(), syscall.O_RDWR)
		if err != nil {
			return err
		}
		h, hlen, err := headerOf(fd, j.active())
		if err != nil {
			syscall.Close(fd)
			return err
		}
		c.actFD, c.actIno, c.actDev, c.start, c.hlen, c.end = fd, st.ino, st.dev, h.Start, hlen, -1
	}
	size := st.size
	// A segment that ends where this Store's own last line ended ends in
	// its newline: only another writer's tail can be torn.
	if size > c.hlen && size != c.end {
		last := []byte{0}
		if _, err := syscall.Pread(c.actFD, last, size-1); err == nil && last[0] != '\n' {
			if size, err = cutTorn(c.actFD, c.hlen, size); err != nil {
				return err
			}
		}
	}
	if err := pwriteAll(c.actFD, j.active(), line, size); err != nil {
		c.end = -1
		return err
	}
	c.end = size + int64(len(line))
	return nil
}

// preopenActive opens the active segment and reads its header without
// the journal lock (best effort: on any failure appendActive opens it
// under the lock). Under the lock appendActive compares this descriptor's
// inode with the path's, as it does for a descriptor kept from an earlier
// append.
func (s *Store) preopenActive(c *jfast) {
	path := s.journal().active()
	fd, err := openFile(path, syscall.O_RDWR)
	if err != nil {
		return
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		syscall.Close(fd)
		return
	}
	h, hlen, err := headerOf(fd, path)
	if err != nil {
		syscall.Close(fd)
		return
	}
	c.actFD, c.actIno, c.actDev, c.start, c.hlen, c.end = fd, st.Ino, uint64(st.Dev), h.Start, hlen, -1
}

func (c *jfast) closeActive() {
	if c.actFD >= 0 {
		syscall.Close(c.actFD)
		c.actFD = -1
	}
}

// close releases the cached descriptors. A jfast that never started holds
// none: its zero descriptors are not descriptors (closing "fd 0" closed
// the process's standard input, and then whatever file took its number).
func (c *jfast) close() {
	if c.started {
		c.closeActive()
		if c.lockFD >= 0 {
			syscall.Close(c.lockFD)
		}
	}
	*c = jfast{}
}

// pwriteAll writes data at off; on failure it cuts what it wrote.
func pwriteAll(fd int, path string, data []byte, off int64) error {
	for n := 0; n < len(data); {
		k, err := syscall.Pwrite(fd, data[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Ftruncate(fd, off)
			return &os.PathError{Op: "write", Path: path, Err: err}
		}
		n += k
	}
	return nil
}
