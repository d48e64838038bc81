package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/ckpt-dev/ckpt"
)

// The liveness log (docs/design.md, "Liveness in bulk"): a listing of
// every checkpoint reads every checkpoint's liveness from three files
// instead of one beat file each.
//
//   - journal/live: every Beat appends "\n<id> <record>\n" (the record is
//     the beat file's new content) BEFORE it writes the beat file (O_APPEND,
//     one write, no lock, no fsync); creating and deleting a checkpoint
//     append "\n<id> -\n" (a tombstone: no beat). The leading newline keeps
//     a torn line from joining the next one.
//   - journal/live.old: the log before its last rotation.
//   - journal/live.index: a header {"live":1,"boot":"<boot ID>"} and the
//     latest record of every checkpoint that has one, in ID order, as of
//     the rotation before last (or the build).
//
// The latest record of a checkpoint is the one with the latest "seen" in
// live.index, live.old and live (on a tie the later line; a later
// tombstone removes it). Because the log is written first, it is never
// behind a beat file that a Beat wrote (one killed between the two leaves
// the log ahead, by a beat that did happen), and a checkpoint without a
// record has no beat file. What breaks that (a machine crash: nothing
// here is synced; a beat file written by hand or by a ckpt before the log)
// is why the index carries the boot it was built under and is rebuilt
// from the beat files under any other boot, and why check compares them.
const (
	liveName      = "live"
	liveOldName   = "live.old"
	liveBuildName = "live.build"
	liveIndexName = "live.index"
	liveLockName  = "live.lock"
	liveVersion   = 1
)

// liveMax is the size past which a Beat rotates the log (a variable for
// tests).
var liveMax int64 = 4 << 20

func (j journal) live() string      { return j.dir + sep + liveName }
func (j journal) liveOld() string   { return j.dir + sep + liveOldName }
func (j journal) liveBuild() string { return j.dir + sep + liveBuildName }
func (j journal) liveIndex() string { return j.dir + sep + liveIndexName }
func (j journal) liveLock() string  { return j.dir + sep + liveLockName }

// liveLine returns the log line of id's record; a nil record is a
// tombstone.
func liveLine(id string, rec []byte) []byte {
	line := make([]byte, 0, len(id)+len(rec)+4)
	line = append(append(append(line, '\n'), id...), ' ')
	if rec == nil {
		line = append(line, '-')
	} else {
		line = append(line, rec...)
	}
	return append(line, '\n')
}

// logLive appends id's record (nil: a tombstone) to the liveness log and
// rotates the log when it has grown past liveMax. An error means the
// record is not in the log: the caller must not write the beat file.
func (s *Store) logLive(id string, rec []byte) error {
	j := s.journal()
	fd, err := openFile(j.live(), syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT)
	if errors.Is(err, fs.ErrNotExist) {
		// A store from before the journal: its first writer makes it.
		if err := os.MkdirAll(j.pending(), 0o755); err != nil {
			return err
		}
		fd, err = openFile(j.live(), syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT)
	}
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if err := writeAll(fd, j.live(), liveLine(id, rec)); err != nil {
		return err
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > liveMax {
		s.rotateLive()
	}
	return nil
}

// rotateLive folds live.old into live.index and renames live to live.old,
// unless another process is rotating or building (then it is left to
// that one, or to the next Beat). Readers open live, live.old and
// live.index in that order, so whatever moment they open them at, the
// records they read cover every line logged before (see readLiveBase).
func (s *Store) rotateLive() {
	j := s.journal()
	unlock, ok := lockFile(j.liveLock(), false)
	if !ok {
		return
	}
	defer unlock()
	if size, err := fileSize(j.live()); err != nil || size <= liveMax {
		return // rotated meanwhile
	}
	switch idx, err := readLiveIndex(j); {
	case err == nil && idx.boot == thisBoot():
		// A build's leftover (one that died) and live.old, in log order.
		for _, path := range []string{j.liveBuild(), j.liveOld()} {
			data, err := readNoFollow(path)
			if err != nil && !os.IsNotExist(err) {
				return // the files keep their records: nothing is renamed over them
			}
			idx.apply(data)
		}
		if j.writeLiveIndex(idx.recs) != nil {
			return
		}
		os.Remove(j.liveBuild())
	case err != nil && !os.IsNotExist(err) && err != errLiveIndex:
		return // perhaps a passing failure: keep live.old
	}
	// Without a trusted index nothing reads the records as complete, and
	// the next build reads the beat files themselves.
	os.Rename(j.live(), j.liveOld())
}

// lockFile takes an exclusive flock of the file at path (created if
// missing), waiting for it only if wait is set.
func lockFile(path string, wait bool) (unlock func(), ok bool) {
	fd, err := openFile(path, syscall.O_RDWR|syscall.O_CREAT)
	if err != nil {
		return nil, false
	}
	how := syscall.LOCK_EX | syscall.LOCK_NB
	if wait {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(fd, how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, false
	}
	return func() { syscall.Close(fd) }, true
}

// rebuildLive rebuilds live.index from the beat files (ckpt repair).
func (s *Store) rebuildLive() error {
	v, err := s.journal().loadView()
	defer v.close()
	if err != nil {
		return err
	}
	return s.buildLive(v, true)
}

// liveRecord is one checkpoint's latest record; rec is nil for a
// tombstone, and seen is parsed only when two records meet.
type liveRecord struct {
	rec  []byte
	seen int64 // Unix ns; 0: not parsed yet
}

// seenOf returns the beat time of a record, parsing it once.
func (r *liveRecord) seenOf() int64 {
	if r.seen == 0 && r.rec != nil {
		if at, _ := parseBeat(r.rec); !at.IsZero() {
			r.seen = at.UnixNano()
		} else {
			r.seen = -1
		}
	}
	return r.seen
}

// liveSet is the latest record of each checkpoint.
type liveSet struct {
	boot string
	recs map[string]liveRecord
}

// apply folds log lines (a live or live.old file, or an index's body)
// into the set, in order.
func (ls *liveSet) apply(data []byte) {
	eachLiveLine(data, func(id string, r liveRecord) {
		cur, ok := ls.recs[id]
		ls.recs[id] = mergeLive(cur, ok, r)
	})
}

// eachLiveLine calls fn with each line of data in order: "<id> <record>"
// or "<id> -" (a tombstone, rec nil). Any other line is skipped (a torn
// line, garbage). The IDs and records are slices of one copy of data.
func eachLiveLine(data []byte, fn func(id string, r liveRecord)) {
	if len(data) == 0 {
		return
	}
	// One string for the whole file: the IDs are slices of it, not one
	// allocation each.
	str := string(data)
	for len(str) > 0 {
		nl := strings.IndexByte(str, '\n')
		if nl < 0 {
			break // a torn last line
		}
		line := str[:nl]
		str = str[nl+1:]
		sp := strings.IndexByte(line, ' ')
		if sp <= 0 || sp == len(line)-1 {
			continue
		}
		id, body := line[:sp], line[sp+1:]
		switch {
		case body == "-":
			fn(id, liveRecord{})
		case body[0] == '{' && body[len(body)-1] == '}':
			fn(id, liveRecord{rec: unsafeBytes(body)})
		}
	}
}

// mergeLive returns the latest of cur (if ok) and next, next being logged
// later: a tombstone, or the record with the later beat (a concurrent
// beat's older record can be logged after a newer one), next on a tie.
func mergeLive(cur liveRecord, ok bool, next liveRecord) liveRecord {
	if ok && cur.rec != nil && next.rec != nil && cur.seenOf() > next.seenOf() {
		return cur
	}
	return next
}

// readLiveIndex reads live.index; an error when it is missing or not one.
func readLiveIndex(j journal) (*liveSet, error) {
	data, err := readNoFollow(j.liveIndex())
	if err != nil {
		return nil, err
	}
	return parseLiveIndex(data)
}

// parseLiveIndex parses a live.index file's bytes.
func parseLiveIndex(data []byte) (*liveSet, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, errLiveIndex
	}
	boot, ok := parseLiveHeader(data[:nl])
	if !ok {
		return nil, errLiveIndex
	}
	ls := &liveSet{boot: boot, recs: make(map[string]liveRecord, bytes.Count(data, []byte{'\n'}))}
	ls.apply(data[nl+1:])
	return ls, nil
}

var errLiveIndex = &os.PathError{Op: "read", Path: liveIndexName, Err: syscall.EINVAL}

// liveHeader returns live.index's header line (without its newline).
func liveHeader(boot string) []byte {
	return []byte(`{"live":` + strconv.Itoa(liveVersion) + `,"boot":` + strconv.Quote(boot) + `}`)
}

// parseLiveHeader reads exactly the header liveHeader writes.
func parseLiveHeader(b []byte) (boot string, ok bool) {
	pre := `{"live":` + strconv.Itoa(liveVersion) + `,"boot":`
	s := string(b)
	if !strings.HasPrefix(s, pre) || !strings.HasSuffix(s, "}") {
		return "", false
	}
	boot, err := strconv.Unquote(s[len(pre) : len(s)-1])
	if err != nil || strings.ContainsAny(boot, "\n\"\\") {
		return "", false
	}
	return boot, true
}

// writeLiveIndex writes recs as live.index under this boot: a temporary
// file renamed over it, not synced (a crash is caught by the boot).
func (j journal) writeLiveIndex(recs map[string]liveRecord) error {
	ids := make([]string, 0, len(recs))
	n := 64
	for id, r := range recs {
		if r.rec != nil {
			ids = append(ids, id)
			n += len(id) + len(r.rec) + 2
		}
	}
	slices.Sort(ids)
	buf := make([]byte, 0, n)
	buf = append(append(buf, liveHeader(thisBoot())...), '\n')
	for _, id := range ids {
		buf = append(append(append(buf, id...), ' '), recs[id].rec...)
		buf = append(buf, '\n')
	}
	tmp := j.liveIndex() + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := writePlain(tmp, buf); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, j.liveIndex()); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// buildLive writes live.index from the beat files of v's checkpoints
// (the truth), under this boot, holding the liveness lock (it returns an
// error without waiting when another process holds it, unless wait). The
// lines logged before it began are moved out of the way first (live to
// live.build) and folded in by their latest beat only, then removed with
// live.old: a tombstone among them predates the scan, which already shows
// what followed it, and must not remove what the scan found (a beat file
// with no line in the log: written by hand, or by an older ckpt). Lines
// logged meanwhile go to a new live, which readers fold in on top. The
// hints of an older ckpt are removed first: the beat files hold what they
// said, and any hint written afterwards is a beat this build missed.
func (s *Store) buildLive(v *view, wait bool) error {
	j := s.journal()
	unlock, ok := lockFile(j.liveLock(), wait)
	if !ok {
		return errLiveBusy
	}
	defer unlock()
	if err := os.Rename(j.live(), j.liveBuild()); err != nil && !os.IsNotExist(err) {
		return err
	}
	pre := liveSet{recs: map[string]liveRecord{}}
	for _, path := range []string{j.liveOld(), j.liveBuild()} {
		data, err := readNoFollow(path)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		pre.apply(data)
	}
	os.Remove(j.beatsOld())
	os.Remove(j.beats())
	dir := s.openListDir()
	defer dir.close()
	recs := map[string]liveRecord{}
	for _, id := range v.ids() {
		r := liveRecord{rec: dir.beatRecord(s, id)}
		if p, ok := pre.recs[id]; ok && p.rec != nil {
			// A beat logged before the scan whose file the scan read
			// before it was written, or one whose writer died between.
			r = mergeLive(r, r.rec != nil, p)
		}
		if r.rec != nil {
			recs[id] = r
		}
	}
	if err := j.writeLiveIndex(recs); err != nil {
		return err
	}
	os.Remove(j.liveOld())
	os.Remove(j.liveBuild())
	return nil
}

var errLiveBusy = &os.PathError{Op: "lock", Path: liveLockName, Err: syscall.EWOULDBLOCK}

// beatRecord returns id's beat file as a log record: its content when it
// holds a time, else one made from the file's modification time (an
// older ckpt's empty beat file); nil when there is no beat.
func (d listDir) beatRecord(s *Store, id string) []byte {
	at, size := d.beat(id)
	if at.IsZero() {
		return nil
	}
	if size > 0 {
		if b, err := readNoFollow(s.files(id).beat()); err == nil {
			if seen, p := parseBeat(b); !seen.IsZero() {
				return beatBytes(seen, p)
			}
		}
	}
	return beatBytes(at, ckpt.Presence{})
}

// beatBytes returns the beat file's content for a beat at at with
// presence p.
func beatBytes(at time.Time, p ckpt.Presence) []byte {
	if b, ok := appendBeat(nil, at, p); ok {
		return b
	}
	b, err := json.Marshal(beatRecord{Seen: at, Presence: p})
	if err != nil {
		return nil
	}
	return b
}

// unsafeBytes returns the bytes of s without a copy. They are only ever
// read: records are parsed and copied, never changed.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
