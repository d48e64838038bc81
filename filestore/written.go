package filestore

import (
	"github.com/ckpt-dev/ckpt"
)

// written is what this Store last wrote to a checkpoint: enough for its next
// update to skip reading and parsing state.json, once a stat and a read of
// the history's last line prove the history is exactly as this Store left
// it. The last line carries a checksum chained over the whole history, so an
// equal last line at an equal size of the same file is the same history.
type written struct {
	ino   uint64
	size  int64
	last  []byte           // the history's last line
	sum   string           // its checksum
	state *ckpt.Checkpoint // fold of the history; never handed out
	keys  *keyWindow       // the window's keys (keywindow.go); nil: not read
}

// maxWritten bounds the cache; past it, it starts again empty.
const maxWritten = 1024

// takeWritten returns checkpoint f's current state from this Store's record
// of its own last write, if the history has not changed since. It removes
// the record: the caller owns the state (and Apply may change it) until it
// remembers its own write. Callers hold f's lock. hfd, if not -1, is the
// history as this Store kept it open from its last append: used if the
// path still names it (looked up through dfd, f's directory as the held
// lock has it open, or -1), else closed.
func (s *Store) takeWritten(f files, dfd, hfd int) (current, bool) {
	s.mu.Lock()
	w := s.written[f.id]
	delete(s.written, f.id)
	s.mu.Unlock()
	if w == nil {
		closeFD(hfd)
		return current{}, false
	}
	fd, ok := reuseAsLeft(dfd, hfd, f.history(), w.ino, w.size, w.last)
	if !ok {
		return current{}, false
	}
	return current{state: w.state, sum: w.sum, end: w.size, size: w.size, cached: true, ino: w.ino, hfd: fd, hasFD: fd >= 0,
		remembered: true, keys: w.keys}, true
}

// remember records this Store's write of line, which made the history of f
// size bytes long with state st and the window's keys keys (nil: not
// known). ino is the history's inode number if known (an append keeps it),
// else 0. The Store owns st and keys from now on: the caller must not hand
// them out or change them. It reports whether it remembered.
func (s *Store) remember(f files, ino uint64, size int64, line []byte, sum string, st *ckpt.Checkpoint, keys *keyWindow) bool {
	if ino == 0 {
		var got int64
		var err error
		if ino, got, err = fileIdentity(f.history()); err != nil || ino == 0 || got != size {
			s.forget(f.id)
			return false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil || len(s.written) >= maxWritten {
		s.written = map[string]*written{}
	}
	s.written[f.id] = &written{ino: ino, size: size, last: line, sum: sum, state: st, keys: keys}
	return true
}

// forget drops what this Store remembers of checkpoint id.
func (s *Store) forget(id string) {
	s.mu.Lock()
	delete(s.written, id)
	s.mu.Unlock()
}
