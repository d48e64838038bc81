//go:build unix

package filestore

import (
	"context"
	"syscall"
)

// heldFiles are a checkpoint's descriptors that a Store keeps open between
// its appends to it, so that the next append flocks them again instead of
// opening them: the directory (its device and inode as opened) and the lock
// file, and the history open for appending (reused only when the path
// still names it and it is as this Store left it, see takeWritten). A set
// belongs to one append at a time: lockHeld takes it out of the Store and
// the release puts it back. A flock belongs to an open file, so two
// goroutines locking through one descriptor would not exclude each other.
type heldFiles struct {
	dfd, lfd int
	dev, ino uint64 // the directory's, when dfd was opened
	lockIno  uint64 // the lock file's
	hfd      int    // -1: none
	gen      uint64 // the Store's heldGen when opened: Close changes it
}

// maxHeldFiles bounds the sets a Store keeps (three descriptors each).
const maxHeldFiles = 4

func (h heldFiles) close() {
	syscall.Close(h.dfd)
	syscall.Close(h.lfd)
	if h.hfd >= 0 {
		syscall.Close(h.hfd)
	}
}

// takeHeldFiles removes and returns the set kept for id, if any.
func (s *Store) takeHeldFiles(id string) (heldFiles, bool) {
	s.mu.Lock()
	h, ok := s.held[id]
	delete(s.held, id)
	s.mu.Unlock()
	return h, ok
}

// keepHeldFiles keeps h for id's next append, unless the Store was closed
// since h was opened (then h is closed). Past maxHeldFiles another set is
// closed to make room.
func (s *Store) keepHeldFiles(id string, h heldFiles) {
	s.mu.Lock()
	if h.gen != s.heldGen {
		s.mu.Unlock()
		h.close()
		return
	}
	if s.held == nil {
		s.held = map[string]heldFiles{}
	}
	var evicted []heldFiles
	for other, o := range s.held {
		if len(s.held) < maxHeldFiles {
			break
		}
		evicted = append(evicted, o)
		delete(s.held, other)
	}
	if old, ok := s.held[id]; ok { // another Store goroutine's, kept meanwhile
		evicted = append(evicted, old)
	}
	s.held[id] = h
	s.mu.Unlock()
	for _, o := range evicted {
		o.close()
	}
}

// closeHeldFiles closes every kept set; sets in use are closed when
// released (their generation is past).
func (s *Store) closeHeldFiles() {
	s.mu.Lock()
	held := s.held
	s.held = nil
	s.heldGen++
	s.mu.Unlock()
	for _, h := range held {
		h.close()
	}
}

// heldGeneration returns the generation a set opened now belongs to.
func (s *Store) heldGeneration() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heldGen
}

// relock takes f's locks through a kept set h. ok is false (and h closed)
// when the directory or the lock file at its path is no longer the one h
// has open (a lock file deleted or replaced: a program that locks the new
// one must hold this writer off, and the next writer reads its pending
// marker there): the caller opens the checkpoint's files afresh.
func (s *Store) relock(ctx context.Context, f files, h heldFiles) (held heldLock, ok bool, err error) {
	if err := waitFlock(ctx, h.lfd); err != nil {
		h.close()
		return heldLock{}, ctx.Err() != nil, ctx.Err()
	}
	if err := waitFlock(ctx, h.dfd); err != nil {
		h.close()
		return heldLock{}, ctx.Err() != nil, ctx.Err()
	}
	if !isFileID(-1, f.dir, h.dev, h.ino) || !isFileID(h.dfd, f.lock(), h.dev, h.lockIno) {
		h.close() // the locks go with the descriptors
		return heldLock{}, false, nil
	}
	return s.holding(f.id, h), true, nil
}

// holding returns the heldLock of f's locked set h, whose release unlocks
// it and keeps it, with the history descriptor it is given.
func (s *Store) holding(id string, h heldFiles) heldLock {
	hist := h.hfd
	h.hfd = -1
	return heldLock{lockFD: h.lfd, dirFD: h.dfd, histFD: hist, release: func(keep int) {
		flock(h.dfd, syscall.LOCK_UN)
		flock(h.lfd, syscall.LOCK_UN)
		h.hfd = keep
		s.keepHeldFiles(id, h)
	}}
}

// isFileID reports whether path (through dfd) is the file dev and ino
// name. It does not read the file's times (fileid.go): the lock file is
// written at every append.
func isFileID(dfd int, path string, dev, ino uint64) bool {
	id, err := idIn(dfd, path)
	return err == nil && id.dev == dev && id.ino == ino
}
