package filestore

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"syscall"

	"github.com/ckpt-dev/ckpt"
)

// The reader's side of the liveness log (livelog.go): what a listing of
// many checkpoints reads their liveness from.

// liveBase is the liveness of live.index, live.old and live as read at
// once, kept by a Store for its next listing while the files are the same.
type liveBase struct {
	ids  []string     // live.index's IDs, in order
	recs []liveRecord // recs[i] is ids[i]'s, with live.old and live folded in
	more map[string]liveRecord

	index, build, old, live fileIdent
	liveRead                int64 // bytes of live folded in
}

// liveView is one listing's liveness: its base and the lines appended to
// live since the base was read.
type liveView struct {
	base  *liveBase
	extra liveSet
	// hints are an older ckpt's beat hints (journal/beats, beathints.go).
	hints map[string]int64
	at    int // the lookup cursor into base.ids (IDs come in order)
}

// lookup returns id's liveness: the beat record (nil: none) and whether
// the listing must read the beat file instead (an older ckpt's hint shows
// a later beat). Called with IDs in increasing order it walks base.ids
// once; out of order it searches.
func (lv *liveView) lookup(id string) (rec []byte, readFile bool) {
	b := lv.base
	if lv.at > 0 && lv.at <= len(b.ids) && b.ids[lv.at-1] >= id {
		lv.at = 0
	}
	for n := 0; lv.at < len(b.ids) && b.ids[lv.at] < id; n++ {
		if n == 8 { // far ahead: search the rest
			lv.at += sort.SearchStrings(b.ids[lv.at:], id)
			break
		}
		lv.at++
	}
	var r liveRecord
	ok := lv.at < len(b.ids) && b.ids[lv.at] == id
	if ok {
		r = b.recs[lv.at]
	} else if len(b.more) > 0 {
		r, ok = b.more[id]
	}
	if len(lv.extra.recs) > 0 {
		if x, xok := lv.extra.recs[id]; xok {
			r, ok = mergeLive(r, ok, x), true
		}
	}
	if len(lv.hints) > 0 {
		if hint, hinted := lv.hints[id]; hinted && (r.rec == nil || hint > r.seenOf()) {
			return nil, true
		}
	}
	return r.rec, false
}

// seenSince reports whether id's record shows a beat at or after before
// (Unix ns).
func (lv *liveView) seenSince(id string, before int64) bool {
	rec, readFile := lv.lookup(id)
	if readFile || rec == nil {
		return false
	}
	at, _ := parseBeat(rec)
	return !at.IsZero() && at.UnixNano() >= before
}

// loadLive returns the liveness of every checkpoint for a settled
// listing, or nil when the files cannot be trusted and no build could be
// made now (the listing then reads each beat file). A missing index, or
// one built under another boot, is rebuilt from the beat files of v's
// checkpoints first.
func (s *Store) loadLive(v *view) *liveView {
	s.mu.Lock()
	prev := s.liveBase
	s.mu.Unlock()
	base, tail, ok := s.readLiveBase(prev)
	if !ok {
		if s.buildLive(v, false) != nil {
			return nil
		}
		if base, tail, ok = s.readLiveBase(nil); !ok {
			return nil
		}
	}
	s.mu.Lock()
	s.liveBase = base
	s.mu.Unlock()
	lv := &liveView{base: base, extra: liveSet{recs: map[string]liveRecord{}}, hints: s.journal().beatHints()}
	lv.extra.apply(tail)
	return lv
}

// readLiveBase reads the three files, opened in the order live, live.old,
// live.index: a rotation (fold live.old into the index, then rename live
// to live.old) between any two opens leaves the records of every line in
// what was opened. prev, when its files are the same ones, is kept and
// only live's new bytes are returned (tail). ok is false when the index
// is missing, damaged or of another boot.
func (s *Store) readLiveBase(prev *liveBase) (base *liveBase, tail []byte, ok bool) {
	j := s.journal()
	var files [4]openedFile // live, live.build, live.old, live.index
	for i, path := range []string{j.live(), j.liveBuild(), j.liveOld(), j.liveIndex()} {
		f, err := openIdent(path)
		if err != nil && (i == len(files)-1 || !os.IsNotExist(err)) {
			closeAll(files[:i])
			return nil, nil, false
		}
		files[i] = f
	}
	defer closeAll(files[:])
	live, build, old, idx := &files[0], &files[1], &files[2], &files[3]
	if prev != nil && prev.index == idx.id && prev.old == old.id && prev.build == build.id &&
		prev.live.ino == live.id.ino && prev.live.dev == live.id.dev && live.id.size >= prev.liveRead {
		tail, err := live.read(prev.liveRead)
		return prev, tail, err == nil
	}
	idxData, err := idx.read(0)
	if err != nil {
		return nil, nil, false
	}
	base, ok = parseLiveBase(idxData)
	if !ok {
		return nil, nil, false
	}
	for _, f := range []*openedFile{build, old, live} {
		data, err := f.read(0)
		if err != nil {
			return nil, nil, false
		}
		base.apply(data)
		f.id.size = int64(len(data))
	}
	base.index, base.build, base.old, base.live, base.liveRead = idx.id, build.id, old.id, live.id, live.id.size
	return base, nil, true
}

// parseLiveBase reads live.index's bytes into a base, if it is an index
// built under this boot.
func parseLiveBase(data []byte) (*liveBase, bool) {
	nl := slices.Index(data, '\n')
	if nl < 0 {
		return nil, false
	}
	if boot, ok := parseLiveHeader(data[:nl]); !ok || boot != thisBoot() {
		return nil, false
	}
	b := &liveBase{}
	sorted := true
	eachLiveLine(data[nl+1:], func(id string, r liveRecord) {
		if n := len(b.ids); n > 0 && b.ids[n-1] >= id {
			sorted = false
		}
		b.ids = append(b.ids, id)
		b.recs = append(b.recs, r)
	})
	if !sorted {
		return nil, false // not as writeLiveIndex writes it: rebuild it
	}
	return b, true
}

// apply folds log lines (live.old, then live) into the base, in order.
func (b *liveBase) apply(data []byte) {
	eachLiveLine(data, func(id string, r liveRecord) {
		if i, found := slices.BinarySearch(b.ids, id); found {
			b.recs[i] = mergeLive(b.recs[i], true, r)
			return
		}
		if b.more == nil {
			b.more = map[string]liveRecord{}
		}
		cur, ok := b.more[id]
		b.more[id] = mergeLive(cur, ok, r)
	})
}

// openedFile is a file opened for reading with its identity; fd -1 is a
// file that does not exist (it reads as empty).
type openedFile struct {
	fd int
	id fileIdent
}

// openIdent opens the file at path (not through a link) and stats it.
func openIdent(path string) (openedFile, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return openedFile{fd: -1}, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return openedFile{fd: -1}, err
	}
	return openedFile{fd: fd, id: fileIdent{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size}}, nil
}

// read reads f from off to its end (which may have grown since the stat).
func (f *openedFile) read(off int64) ([]byte, error) {
	if f.fd < 0 {
		return nil, nil
	}
	b := make([]byte, 0, max(f.id.size-off, 0)+4096)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, 64<<10)
		}
		n, err := syscall.Pread(f.fd, b[len(b):cap(b)], off+int64(len(b)))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

func closeAll(files []openedFile) {
	for _, f := range files {
		if f.fd >= 0 {
			syscall.Close(f.fd)
		}
	}
}

// liveProblems reports the checkpoints among ids whose beat file shows a
// beat the liveness log does not (a beat file written by hand or by a ckpt
// before the log, or a log line lost in a crash): a full listing would
// show an older beat. A log ahead of the beat file (a Beat killed between
// the two) is no problem. Nothing is reported while live.index is missing
// or of another boot: the next full listing builds it from the files.
func (s *Store) liveProblems(ids []string) []ckpt.Problem {
	base, _, ok := s.readLiveBase(nil)
	if !ok {
		return nil
	}
	hints := s.journal().beatHints()
	behind := func(base *liveBase, id string) bool {
		at, _ := readLiveness(s.files(id))
		if at.IsZero() {
			return false
		}
		lv := &liveView{base: base, hints: hints}
		rec, readFile := lv.lookup(id)
		if readFile {
			return false // an older ckpt's hint: listings read the file
		}
		seen, _ := parseBeat(rec)
		return rec == nil || seen.Before(at)
	}
	var out []ckpt.Problem
	for _, id := range ids {
		if !behind(base, id) {
			continue
		}
		// A Beat logs before it writes the file: read the log again in
		// case one came between the two reads.
		if again, _, ok := s.readLiveBase(nil); ok && !behind(again, id) {
			continue
		}
		out = append(out, ckpt.Problem{ID: id, Severity: ckpt.SeverityWarning,
			What:   fmt.Sprintf("the beat file of %s shows a later beat than journal/live (written by hand, by an older ckpt, or lost in a crash): full listings show the older one", id),
			Repair: "ckpt repair (rebuilds journal/live.index from the beat files)"})
	}
	return out
}
