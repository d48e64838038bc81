package filestore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
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

// idleMarkerFiles is how many idle marker files (unlocked, every slot
// blank) the pending directory keeps for the next Stores to adopt, and how
// many names open tries before it creates a file.
const idleMarkerFiles = 8

// open adopts an idle marker file or else creates one. Callers hold s.mu.
func (p *procMarkers) open() error {
	dir := p.s.journal().pending()
	if p.adopt(dir) {
		return nil
	}
	return p.create(dir)
}

// adopt takes an idle marker file a closed Store left: one whose flock is
// free, whose slots are all blank (a dead writer's marker is left to
// settle) and which is still at its name once locked (settle removes a
// file only while it holds the file's flock). Adopting costs no inode, no
// rename and no unlink, which creating did on every short-lived process.
func (p *procMarkers) adopt(dir string) bool {
	names, err := readDirNames(dir)
	if err != nil {
		return false
	}
	// Every Store reads the names in the same order: starting each at its
	// own place keeps 64 processes starting at once from all trying the
	// same 8 files, 56 of them then creating one each (and the directory
	// growing until a listing settles it).
	start := 0
	if len(names) > 0 {
		start = int(uint(os.Getpid())+uint(adoptTurn.Add(1))) % len(names)
	}
	tried := 0
	for k := range names {
		name := names[(start+k)%len(names)]
		if strings.HasPrefix(name, ".") {
			continue
		}
		if tried++; tried > idleMarkerFiles {
			return false
		}
		if fd, ok := lockIdle(dir + sep + name); ok {
			p.fd, p.name = fd, name
			return true
		}
	}
	return false
}

// adoptTurn spreads the Stores of one process over the idle files too.
var adoptTurn atomic.Uint32

// lockIdle opens and locks the marker file at path if it is idle and
// returns its descriptor. A file that holds a marker is passed over before
// it is locked, and read again once locked: a dead writer's file locked
// even for a moment by a Store looking for one to adopt looks alive to a
// settle running then, which left its markers unresolved (a listing then
// missed the dead writer's last update; TestSettleWhileAStoreLooksForAFile).
func lockIdle(path string) (int, bool) {
	fd, err := openFile(path, syscall.O_RDWR)
	if err != nil {
		return -1, false
	}
	if data, err := readAllFD(fd); err != nil || holdsMarker(data) {
		syscall.Close(fd)
		return -1, false
	}
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		syscall.Close(fd)
		return -1, false
	}
	if idleLocked != nil {
		idleLocked()
	}
	data, err := readAllFD(fd)
	idle := err == nil && !holdsMarker(data)
	if idle {
		var st syscall.Stat_t
		ino, _, err := fileIdentity(path)
		idle = err == nil && syscall.Fstat(fd, &st) == nil && st.Ino == ino
	}
	if !idle {
		syscall.Close(fd)
		return -1, false
	}
	return fd, true
}

// idleLocked, when set (by tests only), runs in lockIdle once it holds a
// marker file's flock.
var idleLocked func()

// holdsMarker reports whether a marker file's data holds a marker in one
// of its slots.
func holdsMarker(data []byte) bool {
	for off := 0; off+markerSize <= len(data); off += markerSize {
		if _, ok := parseMarker(data[off : off+markerSize]); ok {
			return true
		}
	}
	return false
}

// create makes a new marker file under a hidden name, locks it and then
// gives it its name, so that no settle ever sees it unlocked.
func (p *procMarkers) create(dir string) error {
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

// close lets go of the marker file. Every slot is blank unless an append
// is in flight (a Store closed mid-append leaves its markers to settle), so
// the file stays, idle, for the next Store to adopt; settle removes idle
// files beyond idleMarkerFiles.
func (p *procMarkers) close() {
	if p == nil || p.fd < 0 {
		return
	}
	syscall.Close(p.fd)
	p.fd = -1
}

// heldLock is a checkpoint's lock as lockHeld took it. lockFD, when not
// -1, is the lock file, open for reading and writing and flock'ed: the
// writer's pending marker goes there (no second open of it per append).
// histFD, when not -1, is the history open for appending, kept from this
// Store's last append to the checkpoint (heldfiles_unix.go): takeWritten
// checks it is still the file at the path before using it.
type heldLock struct {
	lockFD  int
	dirFD   int // the checkpoint's directory, locked and open; -1: none (atfile_unix.go)
	histFD  int
	release func(keep int)
}

// unlock releases the lock.
func (h heldLock) unlock() { h.release(-1) }

// unlockKeeping releases the lock and keeps hfd, the history open for
// appending as this Store left it (-1: none), for its next append.
func (h heldLock) unlockKeeping(hfd int) { h.release(hfd) }
