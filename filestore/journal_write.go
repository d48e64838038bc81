package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Pending markers bridge the gap between an event's fsync in its history
// and its line in the journal, where a writer killed leaves the journal
// behind. Before touching the history, a writer records what it is about to
// do (a marker) in two places, each one pwrite of markerSize bytes, no new
// file and no fsync:
//
//   - the checkpoint's lock file, where the checkpoint's next writer finds
//     it under the same lock before it writes anything, so the journal
//     keeps each checkpoint's revision order;
//   - a slot of its process's marker file, journal/pending/<pid>-<n>, which
//     the process holds flock'ed while it lives, so Watch, Head and List
//     (settle) find the markers of dead processes with one directory read.
//
// Once the journal holds the change, both are blanked. Whoever finds a
// marker of a dead writer journals its change if the history holds it and
// the journal does not (resolve). A machine crash may lose markers and the
// journal's tail alike: the boot check (reconcile) covers that.
type marker struct {
	Kind ckpt.ChangeKind `json:"kind"`
	ID   string          `json:"id"`
	Rev  int64           `json:"rev"`
	Sum  string          `json:"sum"`
}

const markerSize = 256

// encode returns m padded with spaces to markerSize bytes.
func (m marker) encode() []byte {
	b := m.appendJSON(make([]byte, 0, markerSize))
	out := bytes.Repeat([]byte{' '}, markerSize)
	copy(out, b)
	out[markerSize-1] = '\n'
	return out
}

// appendJSON appends json.Marshal(m)'s bytes, by hand when no string
// needs an escape (an ID never does, a sum is hex).
func (m marker) appendJSON(dst []byte) []byte {
	plain := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
		}
		return true
	}
	if !plain(string(m.Kind)) || !plain(m.ID) || !plain(m.Sum) {
		b, _ := json.Marshal(m)
		return append(dst, b...)
	}
	dst = append(append(append(dst, `{"kind":"`...), m.Kind...), `","id":"`...)
	dst = append(append(dst, m.ID...), `","rev":`...)
	dst = strconv.AppendInt(dst, m.Rev, 10)
	return append(append(append(dst, `,"sum":"`...), m.Sum...), `"}`...)
}

var blankMarker = marker{}.blank()

func (marker) blank() []byte {
	out := bytes.Repeat([]byte{' '}, markerSize)
	out[markerSize-1] = '\n'
	return out
}

// parseMarker decodes a marker; ok is false for a blank or torn one.
func parseMarker(b []byte) (marker, bool) {
	var m marker
	b = bytes.TrimSpace(b)
	if len(b) == 0 || json.Unmarshal(b, &m) != nil || ckpt.ValidateID(m.ID) != nil {
		return marker{}, false
	}
	return m, true
}

// afterHistorySync, when set (by tests only), runs in Append between the
// history's fsync and the journal write: where a kill -9 is the worst.
var afterHistorySync func()

// pending is one writer's marker in place, until done.
type pending struct {
	s      *Store
	lockFD int
	ownFD  bool // lockFD was opened for the marker (else it is the held lock's)
	slot   int
}

// markPending records m for checkpoint f, whose lock the caller holds
// (lockFD: the lock file it holds, or -1 to open it). A marker already in
// the lock file is a dead writer's: it is resolved first.
func (s *Store) markPending(f files, lockFD int, m marker) (*pending, error) {
	fd, own := lockFD, false
	if fd < 0 {
		var err error
		if fd, err = openFile(f.lock(), syscall.O_RDWR|syscall.O_NOFOLLOW); err != nil {
			return nil, fmt.Errorf("filestore: %s: %w", f.id, err)
		}
		own = true
	}
	p := &pending{s: s, lockFD: fd, ownFD: own, slot: -1}
	old := make([]byte, markerSize)
	if n, _ := syscall.Pread(fd, old, 0); n > 0 {
		if dead, ok := parseMarker(old[:n]); ok && dead.ID == f.id {
			if err := s.resolveLocked(f, dead); err != nil {
				p.done()
				return nil, err
			}
		}
	}
	b := m.encode()
	var err error
	if p.slot, err = s.procMarkers().take(b); err != nil {
		p.done()
		return nil, err
	}
	if _, err := syscall.Pwrite(fd, b, 0); err != nil {
		p.done()
		return nil, &os.PathError{Op: "write", Path: f.lock(), Err: err}
	}
	return p, nil
}

// leave lets go of the checkpoint's lock file and keeps both markers in
// place, for whoever resolves them (a write that failed between its marker
// and its journal line).
func (p *pending) leave() {
	if p.lockFD >= 0 && p.ownFD {
		syscall.Close(p.lockFD)
	}
	p.lockFD = -1
}

// done blanks the markers and lets go of them.
func (p *pending) done() {
	if p.lockFD >= 0 {
		syscall.Pwrite(p.lockFD, blankMarker, 0)
		if p.ownFD {
			syscall.Close(p.lockFD)
		}
		p.lockFD = -1
	}
	if p.slot >= 0 {
		p.s.procMarkers().give(p.slot)
		p.slot = -1
	}
}

// journalLine appends line, an entry's line with its newline, to the
// journal: Append's hot path, on the Store's cached journal files
// (journal_fast.go).
func (s *Store) journalLine(line []byte) error {
	if err := s.fastAppend(line); err != nil {
		return err
	}
	s.wakeWatchers()
	return nil
}

// journalDelete journals the deletion of checkpoint f (at cur) and runs
// move, which takes its directory away, both under the journal lock: a
// writer that creates the checkpoint again the moment the directory is
// gone journals its event after the deletion, and a Head cannot fall
// between the two. If move fails, the checkpoint is journaled again (its
// latest event) and move's error returned. The pending marker covers a
// kill in between (resolve).
func (s *Store) journalDelete(f files, cur current, move func() error) error {
	mark, err := s.markPending(f, -1, marker{Kind: ckpt.ChangeDeleted, ID: f.id, Rev: cur.rev(), Sum: cur.sum})
	if err != nil {
		return err
	}
	jl, err := s.lockJournalReady()
	if err != nil {
		mark.done() // nothing journaled, nothing moved
		return err
	}
	defer jl.unlock()
	j := s.journal()
	if _, err := j.appendEntries([]jentry{{Kind: ckpt.ChangeDeleted, ID: f.id, Rev: cur.rev(), At: s.clock().UTC()}}); err != nil {
		mark.done()
		return err
	}
	s.wakeWatchers()
	if err := move(); err != nil {
		if e, ok := s.currentEntry(f); ok {
			j.appendEntries([]jentry{e})
		}
		mark.done()
		return err
	}
	mark.done()
	return nil
}

// lockJournalReady takes the journal lock exclusively, first creating the
// journal of a store made before it existed and reconciling a journal last
// reconciled under another boot.
func (s *Store) lockJournalReady() (*jlock, error) {
	jl, err := s.journal().lockJournal(true)
	if err != nil {
		return nil, err
	}
	if err := s.readyLocked(jl); err != nil {
		jl.unlock()
		return nil, err
	}
	return jl, nil
}

// readyLocked is lockJournalReady's work once the lock is held.
func (s *Store) readyLocked(jl *jlock) error {
	j := s.journal()
	boot := jl.bootID()
	if boot != "" && boot == thisBoot() {
		return nil
	}
	segs, err := j.segments()
	if err == nil {
		if len(segs) == 0 && fileSizeOr0(j.index()) == 0 {
			err = s.initJournal()
		} else if boot != thisBoot() {
			err = s.reconcile(true)
		}
	}
	if err == nil {
		err = jl.setBootID(thisBoot())
	}
	return err
}

// initJournal starts the journal of a store: the index holds every
// checkpoint as it is now, at position 0, and the feed starts there. The
// caller holds the journal lock.
func (s *Store) initJournal() error {
	j := s.journal()
	ids, err := s.ids("")
	if err != nil {
		return err
	}
	var entries []jentry
	for _, id := range ids {
		if e, ok := s.currentEntry(s.files(id)); ok {
			entries = append(entries, e)
		}
	}
	if err := j.writeSnapshot(entries, 0); err != nil {
		return err
	}
	return writePlain(j.active(), encodeHeader(0))
}

// currentEntry returns the entry of f's latest event as the files hold it;
// ok is false for a missing or unreadable checkpoint.
func (s *Store) currentEntry(f files) (jentry, bool) {
	cur, err := s.load(f)
	if err != nil || cur.state == nil {
		return jentry{}, false
	}
	last, err := lastEvent(f, cur.end)
	if err != nil || last.Seq != cur.rev() {
		return jentry{}, false
	}
	return entryOf(last, cur.end, cur.state), true
}

// lastEvent decodes the history line that ends at byte end.
func lastEvent(f files, end int64) (ckpt.Event, error) {
	for back := int64(4096); ; back *= 4 {
		from := max(end-back, 0)
		data, err := readRange(f.history(), from, end)
		if err != nil {
			return ckpt.Event{}, err
		}
		if len(data) == 0 || data[len(data)-1] != '\n' {
			return ckpt.Event{}, fmt.Errorf("history of %s does not end a line at %d", f.id, end)
		}
		if i := bytes.LastIndexByte(data[:len(data)-1], '\n'); i >= 0 || from == 0 {
			return ckpt.DecodeLine(data[i+1:])
		}
	}
}

// resolveLocked resolves m under the journal lock.
func (s *Store) resolveLocked(f files, m marker) error {
	jl, err := s.lockJournalReady()
	if err != nil {
		return err
	}
	defer jl.unlock()
	return s.resolve(f, m)
}

// resolve journals the change a dead writer's marker m announces, if the
// history holds it and the journal does not. The caller holds the journal
// lock and f's lock (or f's directory is gone).
func (s *Store) resolve(f files, m marker) error {
	cur, err := s.load(f)
	if err != nil {
		return err
	}
	has := cur.state != nil && cur.rev() == m.Rev && cur.sum == m.Sum
	v, err := s.journal().loadView()
	if err != nil {
		return err
	}
	defer v.close()
	journaled, ok := v.latest(f.id)
	var e jentry
	switch {
	case m.Kind == ckpt.ChangeEvent && has && (!ok || journaled.rev < m.Rev):
		if e, ok = s.currentEntry(f); !ok {
			return fmt.Errorf("filestore: %s: its last event cannot be read to journal it", f.id)
		}
	case m.Kind == ckpt.ChangeDeleted && !has && ok && journaled.rev <= m.Rev:
		e = jentry{Kind: ckpt.ChangeDeleted, ID: f.id, Rev: m.Rev, At: s.clock().UTC()}
	case m.Kind == ckpt.ChangeDeleted && has && !ok:
		// Journaled as deleted, then killed before the move: it is back.
		if e, ok = s.currentEntry(f); !ok {
			return fmt.Errorf("filestore: %s: its last event cannot be read to journal it", f.id)
		}
	default:
		return nil
	}
	if _, err := s.journal().appendEntries([]jentry{e}); err != nil {
		return err
	}
	s.wakeWatchers()
	return nil
}

// settle resolves the markers of writer processes that died, and
// reconciles a journal last reconciled under another boot. A marker whose
// checkpoint is locked is left to that checkpoint's writer, which resolves
// it first.
func (s *Store) settle() error {
	if s.linked != nil {
		return s.linked // a journal directory may be a link: never follow it
	}
	j := s.journal()
	names, err := readDirNames(j.pending())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("filestore: change journal: %w", err)
	}
	if !j.bootMatches() {
		jl, err := s.lockJournalReady()
		if err != nil {
			return err
		}
		jl.unlock()
	}
	mine := s.procMarkerName()
	keep := idleMarkerFiles
	for _, name := range names {
		if name == mine {
			continue
		}
		// A hidden name is a marker file being created (locked, then
		// named); one left for a minute is a dead creator's.
		hidden := strings.HasPrefix(name, ".")
		if hidden && time.Since(modTime(j.pending()+sep+name)) < time.Minute {
			continue
		}
		idle, err := s.settleFile(j.pending()+sep+name, hidden || keep == 0)
		if err != nil {
			return err
		}
		if idle && !hidden && keep > 0 {
			keep--
		}
	}
	return nil
}

// settleFile resolves the markers in a marker file whose Store is gone (its
// flock is free). Once all are, the file is idle: it is removed if remove
// is set, else kept for a Store to adopt (see procMarkers.adopt).
func (s *Store) settleFile(path string, remove bool) (idle bool, err error) {
	fd, err := openFile(path, syscall.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ckpt.ErrCorrupt) {
		return false, nil // removed meanwhile, or a link: no writer's markers
	}
	if err != nil {
		// A reader without write access cannot settle: its listing then
		// checks every entry against the files (List's settled).
		return false, fmt.Errorf("filestore: change journal: %w", err)
	}
	defer syscall.Close(fd)
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false, nil // its Store lives
	}
	data, err := readAllFD(fd)
	if err != nil {
		return false, err
	}
	left := false
	for off := 0; off+markerSize <= len(data); off += markerSize {
		m, ok := parseMarker(data[off : off+markerSize])
		if !ok {
			continue
		}
		f := s.files(m.ID)
		unlock, ok := tryLock(f)
		if !ok {
			left = true
			continue
		}
		err := s.resolveLocked(f, m)
		if err == nil {
			syscall.Pwrite(fd, blankMarker, int64(off))
			clearLockMarker(f, m)
		}
		unlock()
		if err != nil {
			return false, err
		}
	}
	if !left && remove {
		os.Remove(path)
	}
	return !left, nil
}

// deadMarkers returns the markers in the marker file at path if its
// process is gone (its flock is free), reading only.
func deadMarkers(path string) ([]marker, bool) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	if syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		return nil, false
	}
	data, err := readAllFD(fd)
	if err != nil {
		return nil, false
	}
	var out []marker
	for off := 0; off+markerSize <= len(data); off += markerSize {
		if m, ok := parseMarker(data[off : off+markerSize]); ok {
			out = append(out, m)
		}
	}
	return out, true
}

// clearLockMarker blanks f's lock-file marker if it is m.
func clearLockMarker(f files, m marker) {
	fd, err := openFile(f.lock(), syscall.O_RDWR)
	if err != nil {
		return
	}
	defer syscall.Close(fd)
	b := make([]byte, markerSize)
	if n, _ := syscall.Pread(fd, b, 0); n > 0 {
		if got, ok := parseMarker(b[:n]); ok && got == m {
			syscall.Pwrite(fd, blankMarker, 0)
		}
	}
}

func readAllFD(fd int) ([]byte, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	b := make([]byte, st.Size)
	n, err := syscall.Pread(fd, b, 0)
	if err != nil {
		return nil, err
	}
	return b[:n], nil
}

// bootMatches reports whether the journal was reconciled under this boot,
// without taking its lock.
func (j journal) bootMatches() bool {
	b, err := os.ReadFile(j.lock())
	return err == nil && string(bytes.TrimSpace(b)) == thisBoot() && thisBoot() != ""
}

// tryLock takes f's lock if it is free; a checkpoint whose directory is
// gone needs none. ok is false when a writer holds it.
func tryLock(f files) (unlock func(), ok bool) {
	fd, err := openFile(f.lock(), syscall.O_RDONLY)
	if err != nil {
		return func() {}, errors.Is(err, fs.ErrNotExist)
	}
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		syscall.Close(fd)
		return nil, false
	}
	return func() { syscall.Close(fd) }, true
}

// readDirNames returns the names in dir, by plain system calls (os.Open
// also tries to register the directory with the runtime's poller).
func readDirNames(dir string) ([]string, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer syscall.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return names, &os.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
	}
}

// reconcile makes the journal complete again after a crash may have lost
// its unsynced tail: it compares every checkpoint's history with the
// journal's view and journals what is missing (the events after the last
// one journaled, and deletions of checkpoints that are gone), in a new
// segment after a gap when afterCrash, so that a cursor into a lost tail
// is refused rather than misread. The caller holds the journal lock.
func (s *Store) reconcile(afterCrash bool) error {
	j := s.journal()
	v, err := j.loadView()
	defer v.close()
	if err != nil && !errors.Is(err, ckpt.ErrCorrupt) {
		return err
	}
	if err != nil || v.pruned {
		// No usable view: start over from the files; the feed restarts.
		return s.rebuildJournal()
	}
	missing, err := s.missingEntries(v)
	if err != nil {
		return err
	}
	if afterCrash {
		if err := j.startSegment((v.end/bootGap + 1) * bootGap); err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := j.appendEntries(missing); err != nil {
		return err
	}
	s.wakeWatchers()
	return nil
}

// missingEntries returns the entries the journal lacks against the files:
// for each checkpoint whose history is past the view's entry, its events
// after that entry (the last with the summary), or only its last event
// when the view does not know it; for each checkpoint the view holds that
// is gone, a deletion.
func (s *Store) missingEntries(v *view) ([]jentry, error) {
	ids, err := s.ids("")
	if err != nil {
		return nil, err
	}
	var out []jentry
	onDisk := map[string]bool{}
	for _, id := range ids {
		onDisk[id] = true
		f := s.files(id)
		e, ok := v.latest(id)
		if ok && fileSizeOr0(f.history()) == e.size {
			continue
		}
		cur, err := s.load(f)
		if err != nil || cur.state == nil {
			continue // damage is check's
		}
		if ok && cur.rev() <= e.rev {
			// A history that a repair (or a hand) made other than the
			// journal's entry: a full listing trusts the view, so the
			// journal takes the history's state as it is now.
			if je, changed := s.rewrittenEntry(id, e, cur); changed {
				out = append(out, je)
			}
			continue
		}
		// A checkpoint new to the journal (made behind the store's back,
		// or whose every event a crash took from the journal) enters it
		// at its current revision.
		from := cur.rev()
		if ok {
			from = e.rev + 1
		}
		events, err := s.History(context.Background(), id, from, 0)
		if err != nil {
			continue
		}
		for i, ev := range events {
			je := jentry{Kind: ckpt.ChangeEvent, ID: id, Rev: ev.Seq, Type: ev.Type, At: ev.At, Sum: ev.Sum}
			if i == len(events)-1 {
				je = entryOf(ev, cur.end, cur.state)
			}
			out = append(out, je)
		}
	}
	for _, id := range v.ids() {
		if !onDisk[id] {
			e, _ := v.latest(id)
			out = append(out, jentry{Kind: ckpt.ChangeDeleted, ID: id, Rev: e.rev, At: s.clock().UTC()})
		}
	}
	return out, nil
}

// rewrittenEntry returns the entry of id's history as it is now (cur),
// when it is not the journal's entry e although no later than it: a
// repair kept a prefix of it, or it was edited by hand. A torn tail after
// e's events is not a change.
func (s *Store) rewrittenEntry(id string, e ientry, cur current) (jentry, bool) {
	if cur.end == e.size && cur.rev() == e.rev {
		return jentry{}, false
	}
	events, err := s.History(context.Background(), id, cur.rev(), 0)
	if err != nil || len(events) == 0 {
		return jentry{}, false
	}
	return entryOf(events[len(events)-1], cur.end, cur.state), true
}

// rebuildJournal starts the journal again from the files: a new index of
// every checkpoint at a position after everything the old journal held,
// and a new active segment; the old segments go, so every old cursor is
// refused (ErrInvalid: list again) rather than resumed past changes the
// old journal may have lacked.
// The caller holds the journal lock.
func (s *Store) rebuildJournal() error {
	j := s.journal()
	end := int64(0)
	if segs, err := j.segments(); err == nil && len(segs) > 0 {
		last := segs[len(segs)-1]
		end = last.start + fileSizeOr0(last.path)
	}
	at := (end/bootGap + 1) * bootGap
	ids, err := s.ids("")
	if err != nil {
		return err
	}
	var entries []jentry
	for _, id := range ids {
		if e, ok := s.currentEntry(s.files(id)); ok {
			entries = append(entries, e)
		}
	}
	old, err := j.segments()
	if err != nil {
		return err
	}
	if err := j.startSegment(at); err != nil {
		return err
	}
	if err := j.writeSnapshot(entries, at); err != nil {
		return err
	}
	// The old segments may lack changes the files hold: no cursor into
	// them may resume as if it had missed nothing.
	for _, sg := range old {
		if !sg.active {
			os.Remove(sg.path)
		} else {
			os.Remove(j.archived(sg.start))
		}
	}
	s.wakeWatchers()
	return nil
}
