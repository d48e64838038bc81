package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// current is a checkpoint's latest state as read from disk.
type current struct {
	state *ckpt.Checkpoint // nil: the checkpoint does not exist
	sum   string           // the last event's sum
	end   int64            // history bytes through the last good event
	size  int64            // history size when read
	torn  int64            // bytes of a torn last line after end
	// cached is true when state.json was valid and current.
	cached bool
	// ino is the history's inode number when known (from this Store's
	// memory of its own last write), else 0.
	ino uint64
	// hfd is the history open for appending when hasFD (this Store's
	// memory served, takeWritten); the zero value holds none.
	hfd   int
	hasFD bool
	// remembered is true when the state came from this Store's memory of
	// its own last write (takeWritten), and keys is that memory's key
	// window, if it has one.
	remembered bool
	keys       *keyWindow
}

// historyFD returns the open history descriptor, or -1.
func (c current) historyFD() int {
	if !c.hasFD {
		return -1
	}
	return c.hfd
}

// closeHistory closes the history descriptor takeWritten opened.
func (c current) closeHistory() {
	if c.hasFD {
		syscall.Close(c.hfd)
	}
}

// closeFD closes fd unless it is -1.
func closeFD(fd int) {
	if fd >= 0 {
		syscall.Close(fd)
	}
}

func (c current) rev() int64 {
	if c.state == nil {
		return 0
	}
	return c.state.Rev
}

// readBuffers holds buffers for reading state files.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// errRaced says the history grew while a reader was looking; load again.
var errRaced = errors.New("history changed while reading")

// load reads checkpoint f's latest state in the recovery order of
// docs/design.md: state.json if current, else state.json or the newest
// usable backup plus replay of the history after it, else the whole history.
// It writes nothing. A state file or backup that claims more history than
// there is fails with ckpt.ErrCorrupt.
func (s *Store) load(f files) (current, error) {
	for range 8 {
		c, err := s.loadOnce(f)
		if err != errRaced {
			return c, err
		}
	}
	return current{}, fmt.Errorf("filestore: %s: the history kept changing while reading it; try again", f.id)
}

func (s *Store) loadOnce(f files) (current, error) {
	// state.json is read before the history is measured: a writer grows the
	// history before it rewrites state.json, so the history is at least as
	// long as any (untorn) state.json read first.
	bufp := readBuffers.Get().(*[]byte)
	stateData, stateErr := readFile(f.state(), *bufp)
	size, err := fileSize(f.history())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		readBuffers.Put(bufp)
		return current{}, fmt.Errorf("filestore: %s: %w", f.id, err)
	}
	claimed := int64(0) // the most history any valid envelope claims
	if stateErr != nil {
		readBuffers.Put(bufp)
	} else {
		env, st, err := parseEnvelope(stateData, f.id)
		// The parsed state copies what it keeps: the buffer can go back.
		*bufp = stateData
		readBuffers.Put(bufp)
		if err == nil {
			claimed = env.HistorySize
			switch {
			case env.HistorySize == size:
				return current{state: st, sum: env.Sum, end: size, size: size, cached: true}, nil
			case env.HistorySize > size:
				return current{}, s.shortHistory(f, size, claimed)
			}
			if c, ok, err := replayAfter(f, env, st, size); err != nil || ok {
				return c, err
			}
		}
	}
	backups, _ := listBackups(f)
	for i := len(backups) - 1; i >= 0; i-- {
		env, st, err := readBackup(f, backups[i])
		if err != nil {
			continue
		}
		claimed = max(claimed, env.HistorySize)
		if env.HistorySize > size {
			// The newest valid backup is past the history's end.
			return current{}, s.shortHistory(f, size, claimed)
		}
		if c, ok, err := replayAfter(f, env, st, size); err != nil || ok {
			return c, err
		}
	}
	if size == 0 {
		return current{}, nil
	}
	data, err := readRange(f.history(), 0, size)
	if err != nil {
		return current{}, fmt.Errorf("filestore: %s: %w", f.id, err)
	}
	var st *ckpt.Checkpoint
	r := scanHistory(data, 0, ckpt.Chain{}, func(e ckpt.Event, _ int64) (err error) {
		st, err = ckpt.Apply(f.id, st, e)
		return err
	})
	if r.bad != nil {
		return current{}, damaged(f.id, "%s", r.bad)
	}
	if claimed > r.end {
		return current{}, s.shortHistory(f, r.end, claimed)
	}
	return current{state: st, sum: r.chain.Sum, end: r.end, size: size, torn: r.torn}, nil
}

// shortHistory is the error for a history shorter than a state file or
// backup says it was: acknowledged events were lost from it. If the history
// is growing under a writer, it reports errRaced instead.
func (s *Store) shortHistory(f files, have, claimed int64) error {
	if size, err := fileSize(f.history()); err == nil && size >= claimed {
		return errRaced
	}
	if _, err := os.Lstat(f.dir); errors.Is(err, fs.ErrNotExist) {
		return errRaced
	}
	if have == 0 {
		return damaged(f.id, "history.jsonl is missing or empty but its state or backups record %d bytes of it", claimed)
	}
	return damaged(f.id, "history.jsonl has %d good bytes but its state or backups record %d: acknowledged events were cut off, damaged or edited", have, claimed)
}

// replayAfter continues a state envelope (state.json or a backup) with the
// history lines after it. ok is false when the envelope does not fit the
// history (see after), or the lines after it are damaged: the caller then
// tries an older source.
func replayAfter(f files, env envelope, st *ckpt.Checkpoint, size int64) (current, bool, error) {
	data, ok, err := after(f, env, size)
	if err != nil || !ok {
		return current{}, false, err
	}
	r := scanHistory(data, env.HistorySize, ckpt.Chain{Seq: env.Rev, Sum: env.Sum}, func(e ckpt.Event, _ int64) (err error) {
		st, err = ckpt.Apply(f.id, st, e)
		return err
	})
	if r.bad != nil {
		return current{}, false, nil
	}
	return current{state: st, sum: r.chain.Sum, end: r.end, size: size, torn: r.torn}, true, nil
}

// after returns the history bytes from the end of env's last event to byte
// end, once it has checked that env fits this history: the line that ends
// at env.HistorySize is event env.Rev with checksum env.Sum. ok is false if
// it does not (an envelope of another history, or a damaged line).
func after(f files, env envelope, end int64) ([]byte, bool, error) {
	if env.HistorySize > end {
		return nil, false, nil
	}
	// Read back to the start of the envelope's last event.
	back := min(env.HistorySize, 4096)
	var data []byte
	for {
		var err error
		data, err = readRange(f.history(), env.HistorySize-back, end)
		if err != nil {
			return nil, false, fmt.Errorf("filestore: %s: %w", f.id, err)
		}
		if int64(len(data)) < back || back == env.HistorySize || bytes.LastIndexByte(data[:back-1], '\n') >= 0 {
			break
		}
		back = min(env.HistorySize, back*4)
	}
	if int64(len(data)) < back || data[back-1] != '\n' {
		return nil, false, nil
	}
	lastLine := data[bytes.LastIndexByte(data[:back-1], '\n')+1 : back]
	if e, err := ckpt.DecodeLine(lastLine); err != nil || e.Seq != env.Rev || e.Sum != env.Sum {
		return nil, false, nil
	}
	return data[back:], true, nil
}

// backupName is the file name of the backup at revision rev.
func backupName(rev int64) string { return fmt.Sprintf("state-%012d.json", rev) }

// backupRev parses a backup file name; ok is false for any other name.
func backupRev(name string) (int64, bool) {
	num, ok := strings.CutPrefix(name, "state-")
	if !ok {
		return 0, false
	}
	if num, ok = strings.CutSuffix(num, ".json"); !ok || len(num) != 12 {
		return 0, false
	}
	rev, err := strconv.ParseInt(num, 10, 64)
	return rev, err == nil && rev > 0
}

// listBackups returns the revisions of f's backups, oldest first.
func listBackups(f files) ([]int64, error) {
	if err := realDir(f.backups()); err != nil {
		return nil, err // a symbolic link is not followed
	}
	des, err := os.ReadDir(f.backups())
	if err != nil {
		return nil, err
	}
	var revs []int64
	for _, de := range des {
		if rev, ok := backupRev(de.Name()); ok {
			revs = append(revs, rev)
		}
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i] < revs[j] })
	return revs, nil
}

func readBackup(f files, rev int64) (envelope, *ckpt.Checkpoint, error) {
	data, err := readNoFollow(f.backups() + string(os.PathSeparator) + backupName(rev))
	if err != nil {
		return envelope{}, nil, err
	}
	env, st, err := parseEnvelope(data, f.id)
	if err == nil && env.Rev != rev {
		err = fmt.Errorf("backup %s holds revision %d", backupName(rev), env.Rev)
	}
	return env, st, err
}

// stateAt returns checkpoint f at revision rev, which must be at most cur's:
// from the newest backup at or below rev that fits the history, else by
// replaying the history from the start.
func (s *Store) stateAt(f files, cur current, rev int64) (*ckpt.Checkpoint, error) {
	if rev == cur.rev() {
		return cur.state, nil
	}
	backups, _ := listBackups(f)
	for i := len(backups) - 1; i >= 0; i-- {
		if backups[i] > rev {
			continue
		}
		env, st, err := readBackup(f, backups[i])
		if err != nil {
			continue
		}
		rest, ok, err := after(f, env, cur.end)
		if err != nil || !ok {
			continue
		}
		if env.Rev == rev {
			return st, nil
		}
		if got, err := replayTo(f, rest, env.HistorySize, ckpt.Chain{Seq: env.Rev, Sum: env.Sum}, st, rev); err == nil {
			return got, nil
		}
	}
	data, err := readRange(f.history(), 0, cur.end)
	if err != nil {
		return nil, fmt.Errorf("filestore: %s: %w", f.id, err)
	}
	got, err := replayTo(f, data, 0, ckpt.Chain{}, nil, rev)
	if err != nil {
		return nil, damaged(f.id, "%v", err)
	}
	return got, nil
}

// replayTo applies the history lines in data, which starts at file offset
// base, to st until revision rev.
func replayTo(f files, data []byte, base int64, chain ckpt.Chain, st *ckpt.Checkpoint, rev int64) (*ckpt.Checkpoint, error) {
	r := scanHistory(data, base, chain, func(e ckpt.Event, _ int64) (err error) {
		if st, err = ckpt.Apply(f.id, st, e); err == nil && e.Seq == rev {
			return errStop
		}
		return err
	})
	if r.bad != nil {
		return nil, fmt.Errorf("%s", r.bad)
	}
	if st == nil || st.Rev != rev {
		return nil, fmt.Errorf("history.jsonl ends before revision %d", rev)
	}
	return st, nil
}

// readLiveness returns the last beat and the presence record of the beat
// file. The last beat is the time the record holds (content survives a
// copy that loses modification times); a file without one (empty, written
// by an older ckpt, torn by a concurrent writer or damaged) falls back to
// the file's modification time, and holds no presence: liveness is a
// hint, never a reason to fail a read.
func readLiveness(f files) (time.Time, ckpt.Presence) { return readLivenessIn(-1, f) }

// readLivenessIn is readLiveness through dfd, f's directory as its held
// lock has it open (-1: by path).
func readLivenessIn(dfd int, f files) (time.Time, ckpt.Presence) {
	at, size := beatStatIn(dfd, f.beat())
	if at.IsZero() || size == 0 {
		// One lstat: an empty beat file (a plain beat) holds no presence.
		return at, ckpt.Presence{}
	}
	b, err := readNoFollowIn(dfd, f.beat())
	if err != nil {
		return at, ckpt.Presence{}
	}
	seen, p := parseBeat(b)
	if !seen.IsZero() {
		at = seen
	}
	return at, p
}

// parseBeat reads a beat file's record: the beat time it holds (zero when
// none) and the presence; anything but a JSON object (empty, torn,
// garbage) is neither.
func parseBeat(b []byte) (time.Time, ckpt.Presence) {
	if seen, p, ok := decodeBeat(b); ok {
		return seen.UTC(), p
	}
	var r beatRecord
	if len(b) == 0 || json.Unmarshal(b, &r) != nil {
		return time.Time{}, ckpt.Presence{}
	}
	return r.Seen.UTC(), r.Presence
}

// fillLiveness sets c's heartbeat from f's liveness record.
func fillLiveness(c *ckpt.Checkpoint, f files) { fillLivenessIn(-1, c, f) }

// fillLivenessIn is fillLiveness through dfd (-1: by path).
func fillLivenessIn(dfd int, c *ckpt.Checkpoint, f files) {
	at, p := readLivenessIn(dfd, f)
	c.Heartbeat.LastBeat, c.Heartbeat.Presence = at, nil
	if !p.IsZero() {
		c.Heartbeat.Presence = &p
	}
}
