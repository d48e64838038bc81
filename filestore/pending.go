package filestore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
)

// procMarkers is a Store's marker file in journal/pending: one markerSize
// slot per append in flight, held flock'ed for the Store's life so that
// settle knows a live writer's markers from a dead one's.
type procMarkers struct {
	s    *Store
	fd   int
	name string
	free []int
	used int
}

// procMarkers returns the Store's marker file, creating it on first use.
func (s *Store) procMarkers() *procMarkers {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.markers == nil {
		s.markers = &procMarkers{s: s, fd: -1}
	}
	return s.markers
}

// procMarkerName is the name of this Store's marker file, "" before it has one.
func (s *Store) procMarkerName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.markers == nil {
		return ""
	}
	return s.markers.name
}

// open creates the file under a hidden name, locks it and then gives it
// its name, so that no settle ever sees it unlocked. Callers hold s.mu.
func (p *procMarkers) open() error {
	dir := p.s.journal().pending()
	name := fmt.Sprintf("%d-%016x", os.Getpid(), rand.Uint64())
	tmp := dir + sep + "." + name
	fd, err := openFile(tmp, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL)
	if err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("filestore: pending markers: %w", err)
		}
		if fd, err = openFile(tmp, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL); err != nil {
			return fmt.Errorf("filestore: pending markers: %w", err)
		}
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		syscall.Close(fd)
		os.Remove(tmp)
		return fmt.Errorf("filestore: pending markers: %w", err)
	}
	if err := os.Rename(tmp, dir+sep+name); err != nil {
		syscall.Close(fd)
		os.Remove(tmp)
		return fmt.Errorf("filestore: pending markers: %w", err)
	}
	p.fd, p.name = fd, name
	return nil
}

// take writes b into a free slot and returns the slot.
func (p *procMarkers) take(b []byte) (int, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	if p.fd < 0 {
		if err := p.open(); err != nil {
			return -1, err
		}
	}
	slot := p.used
	if n := len(p.free); n > 0 {
		slot, p.free = p.free[n-1], p.free[:n-1]
	} else {
		p.used++
	}
	if _, err := syscall.Pwrite(p.fd, b, int64(slot*markerSize)); err != nil {
		p.free = append(p.free, slot)
		return -1, fmt.Errorf("filestore: pending markers: %w", err)
	}
	return slot, nil
}

// give blanks slot and frees it.
func (p *procMarkers) give(slot int) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	if p.fd >= 0 {
		syscall.Pwrite(p.fd, blankMarker, int64(slot*markerSize))
	}
	p.free = append(p.free, slot)
}

// close removes the marker file when no append is in flight (a Store
// closed mid-append leaves it to settle).
func (p *procMarkers) close() {
	if p == nil || p.fd < 0 {
		return
	}
	if len(p.free) == p.used {
		os.Remove(p.s.journal().pending() + sep + p.name)
	}
	syscall.Close(p.fd)
	p.fd = -1
}
