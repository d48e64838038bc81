package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// The change journal (docs/design.md, "The change journal"): one store-wide
// append-only log of every event appended and every Delete, in the order
// they were journaled, in segments under journal/. A position is a byte
// offset into the concatenation of all segments ever written; a change's
// cursor is the position just past its line.
const (
	journalDir      = "journal"
	journalLockName = "lock"
	activeName      = "changes.jsonl"
	archivedPrefix  = "changes-"
	pendingDir      = "pending"

	// bootGap separates the segments before and after a machine crash: a
	// cursor into a tail the crash may have lost then lies in no segment
	// and is refused instead of pointing into different changes.
	bootGap = 1 << 40
)

// Journal sizes; variables so that tests can make them small.
var (
	// segmentMax is the size past which the active segment is archived and
	// a new one started.
	segmentMax int64 = 4 << 20
	// keepSegments is how many archived segments are kept before the
	// index's position; older ones are pruned.
	keepSegments = 16
	// compactLines is how many journal lines after the index's position
	// make a List fold them into a new index.
	compactLines = 4096
)

// jentry is one journal line, and one index line: checkpoint ID reached
// Rev through an event (Kind event), or was deleted at Rev (Kind deleted).
// Size is the history's length through Rev and Summary the checkpoint's
// summary at Rev without liveness: the index keeps them.
type jentry struct {
	Kind    ckpt.ChangeKind `json:"kind"`
	ID      string          `json:"id"`
	Rev     int64           `json:"rev"`
	Type    ckpt.EventType  `json:"type,omitempty"`
	At      time.Time       `json:"at"`
	Sum     string          `json:"sum,omitempty"`
	Size    int64           `json:"size,omitempty"`
	Summary *ckpt.Summary   `json:"summary,omitempty"`
}

// segHeader is the first line of every segment.
type segHeader struct {
	Journal int   `json:"journal"`
	Start   int64 `json:"start"`
}

const journalVersion = 1

// journal names the journal's files.
type journal struct{ dir string }

func (j journal) lock() string    { return j.dir + sep + journalLockName }
func (j journal) active() string  { return j.dir + sep + activeName }
func (j journal) pending() string { return j.dir + sep + pendingDir }
func (j journal) archived(start int64) string {
	return j.dir + sep + archivedPrefix + fmt.Sprintf("%020d", start) + ".jsonl"
}

func (s *Store) journal() journal { return journal{dir: s.dir + sep + journalDir} }

// jlock is a held flock of journal/lock. Its content is the boot ID of the
// boot that last reconciled the journal with the histories.
type jlock struct{ fd int }

// openLock opens journal/lock (creating it and the journal directory when
// missing), read-only when readOnly allows it and it cannot be written.
func (j journal) openLock(readOnly bool) (int, error) {
	fd, err := openFile(j.lock(), syscall.O_RDWR|syscall.O_CREAT)
	if readOnly && errors.Is(err, fs.ErrPermission) {
		fd, err = openFile(j.lock(), syscall.O_RDONLY) // a reader without write access
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(j.pending(), 0o755); err != nil {
			return -1, fmt.Errorf("filestore: creating the change journal: %w", err)
		}
		fd, err = openFile(j.lock(), syscall.O_RDWR|syscall.O_CREAT)
	}
	if err != nil {
		return -1, fmt.Errorf("filestore: change journal: %w", err)
	}
	return fd, nil
}

// lockJournal takes journal/lock, exclusive or shared, creating the
// journal directory when missing.
func (j journal) lockJournal(exclusive bool) (*jlock, error) {
	fd, err := j.openLock(!exclusive)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_SH
	if exclusive {
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
		return nil, fmt.Errorf("filestore: locking the change journal: %w", err)
	}
	return &jlock{fd: fd}, nil
}

func (l *jlock) unlock() { syscall.Close(l.fd) }

// bootID reads the boot recorded in the lock file.
func (l *jlock) bootID() string {
	buf := make([]byte, 64)
	n, _ := syscall.Pread(l.fd, buf, 0)
	return strings.TrimSpace(string(buf[:max(n, 0)]))
}

// setBootID records boot in the lock file.
func (l *jlock) setBootID(boot string) error {
	if err := syscall.Ftruncate(l.fd, 0); err != nil {
		return err
	}
	_, err := syscall.Pwrite(l.fd, []byte(boot+"\n"), 0)
	return err
}

// segment is one segment file: its start position and, for the active
// one, its name.
type segment struct {
	start  int64
	path   string
	active bool
}

// segments lists the journal's segments, oldest first. The active
// segment's start is read from its header; it is missing from the list when
// the file is.
func (j journal) segments() ([]segment, error) {
	des, err := os.ReadDir(j.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("filestore: change journal: %w", err)
	}
	var segs []segment
	for _, de := range des {
		num, ok := strings.CutPrefix(de.Name(), archivedPrefix)
		if num, ok2 := strings.CutSuffix(num, ".jsonl"); ok && ok2 && len(num) == 20 {
			if start, err := strconv.ParseInt(num, 10, 64); err == nil {
				segs = append(segs, segment{start: start, path: filepath.Join(j.dir, de.Name())})
			}
		}
	}
	sort.Slice(segs, func(a, b int) bool { return segs[a].start < segs[b].start })
	if h, _, err := readHeader(j.active()); err == nil {
		segs = append(segs, segment{start: h.Start, path: j.active(), active: true})
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return segs, nil
}

// readHeader reads the header line of the segment at path and returns it
// with its length in bytes.
func readHeader(path string) (segHeader, int64, error) {
	fd, err := openFile(path, syscall.O_RDONLY)
	if err != nil {
		return segHeader{}, 0, err
	}
	defer syscall.Close(fd)
	return headerOf(fd, path)
}

func headerOf(fd int, path string) (segHeader, int64, error) {
	buf := make([]byte, 128)
	n, err := syscall.Pread(fd, buf, 0)
	if err != nil {
		return segHeader{}, 0, &os.PathError{Op: "read", Path: path, Err: err}
	}
	nl := bytes.IndexByte(buf[:n], '\n')
	var h segHeader
	if nl < 0 || parseSegHeader(buf[:nl], &h) != nil || h.Journal != journalVersion || h.Start < 0 {
		return segHeader{}, 0, fmt.Errorf("%w: %s does not start with a journal segment header", ckpt.ErrCorrupt, path)
	}
	return h, int64(nl + 1), nil
}

// encodeHeader returns the header line of a segment starting at start.
func encodeHeader(start int64) []byte {
	b := strconv.AppendInt([]byte(segHeaderPrefix), start, 10)
	return append(b, '}', '\n')
}

// segHeaderPrefix starts every segment header encodeHeader writes.
const segHeaderPrefix = `{"journal":1,"start":`

// parseSegHeader decodes a segment header as json.Unmarshal does; the form
// encodeHeader writes is read by hand (every append checks the active
// segment's header).
func parseSegHeader(b []byte, h *segHeader) error {
	if digits, ok := bytes.CutPrefix(b, []byte(segHeaderPrefix)); ok && len(digits) > 1 && digits[len(digits)-1] == '}' {
		digits = digits[:len(digits)-1]
		if n, err := strconv.ParseInt(string(digits), 10, 64); err == nil && n >= 0 && strconv.FormatInt(n, 10) == string(digits) {
			*h = segHeader{Journal: journalVersion, Start: n}
			return nil
		}
	}
	return json.Unmarshal(b, h)
}

// appendEntries writes entries to the end of the journal with one write
// and returns the position after them. The caller holds the journal lock
// exclusively. A torn last line (a crash in the middle of a write) is cut
// first: it was never a change. Nothing is synced: the histories are the
// truth and the journal is recovered from them (see reconcile).
func (j journal) appendEntries(entries []jentry) (int64, error) {
	var buf []byte
	for i := range entries {
		var err error
		if buf, err = appendEntry(buf, &entries[i]); err != nil {
			return 0, fmt.Errorf("filestore: journal entry for %s: %w", entries[i].ID, err)
		}
		buf = append(buf, '\n')
	}
	return j.appendEntriesRaw(buf)
}

// appendEntriesRaw is appendEntries of lines already encoded.
func (j journal) appendEntriesRaw(buf []byte) (int64, error) {
	fd, start, size, err := j.openActive()
	if err != nil {
		return 0, err
	}
	// Closes the segment open at return: rotate closes the one it archives
	// and opens the next. (A plain defer of syscall.Close(fd) closed the
	// archived one's number a second time, by then another file's, and
	// leaked the new one.)
	defer func() { syscall.Close(fd) }()
	if size > segmentMax {
		if fd, start, size, err = j.rotate(fd, start, size); err != nil {
			return 0, err
		}
	}
	for off := 0; off < len(buf); {
		n, err := syscall.Pwrite(fd, buf[off:], size+int64(off))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Ftruncate(fd, size)
			return 0, &os.PathError{Op: "write", Path: j.active(), Err: err}
		}
		off += n
	}
	return start + size + int64(len(buf)), nil
}

// openActive opens the active segment for writing under the exclusive
// journal lock and returns it with its start position and its size, a torn
// last line cut away. A missing active segment is created after the last
// archived one.
func (j journal) openActive() (fd int, start, size int64, err error) {
	fd, err = openFile(j.active(), syscall.O_RDWR)
	if errors.Is(err, fs.ErrNotExist) {
		segs, err := j.segments()
		if err != nil {
			return -1, 0, 0, err
		}
		next := int64(0)
		if len(segs) > 0 {
			last := segs[len(segs)-1]
			next = last.start + fileSizeOr0(last.path)
		}
		if err := writePlain(j.active(), encodeHeader(next)); err != nil {
			return -1, 0, 0, fmt.Errorf("filestore: starting a journal segment: %w", err)
		}
		fd, err = openFile(j.active(), syscall.O_RDWR)
		if err != nil {
			return -1, 0, 0, err
		}
	} else if err != nil {
		return -1, 0, 0, err
	}
	h, hlen, err := headerOf(fd, j.active())
	if err != nil {
		syscall.Close(fd)
		return -1, 0, 0, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, 0, 0, err
	}
	size = st.Size
	if size > hlen {
		last := make([]byte, 1)
		if _, err := syscall.Pread(fd, last, size-1); err == nil && last[0] != '\n' {
			if size, err = cutTorn(fd, hlen, size); err != nil {
				syscall.Close(fd)
				return -1, 0, 0, err
			}
		}
	}
	return fd, h.Start, size, nil
}

// cutTorn truncates the segment open as fd, of the given size, to its last
// newline (never into the header of length hlen) and returns the new size.
func cutTorn(fd int, hlen, size int64) (int64, error) {
	end := hlen
	for back := int64(4096); ; back *= 4 {
		from := max(hlen, size-back)
		buf := make([]byte, size-from)
		n, err := syscall.Pread(fd, buf, from)
		if err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = from + int64(i) + 1
			break
		}
		if from == hlen {
			break
		}
	}
	return end, syscall.Ftruncate(fd, end)
}

// rotate archives the active segment open as fd (start, size) and opens a
// new one that starts where it ended.
func (j journal) rotate(fd int, start, size int64) (int, int64, int64, error) {
	if err := os.Rename(j.active(), j.archived(start)); err != nil {
		return fd, start, size, fmt.Errorf("filestore: archiving a journal segment: %w", err)
	}
	syscall.Close(fd)
	next := start + size
	header := encodeHeader(next)
	if err := writePlain(j.active(), header); err != nil {
		return -1, 0, 0, fmt.Errorf("filestore: starting a journal segment: %w", err)
	}
	fd, err := openFile(j.active(), syscall.O_RDWR)
	if err != nil {
		return -1, 0, 0, err
	}
	return fd, next, int64(len(header)), nil
}

// startSegment archives the active segment (if any) and starts a new one
// at position at, which must not be before the current end.
func (j journal) startSegment(at int64) error {
	if h, _, err := readHeader(j.active()); err == nil {
		if err := os.Rename(j.active(), j.archived(h.Start)); err != nil {
			return fmt.Errorf("filestore: archiving a journal segment: %w", err)
		}
	}
	return writePlain(j.active(), encodeHeader(at))
}

func fileSizeOr0(path string) int64 {
	n, _ := fileSize(path)
	return n
}

// head returns the journal's end position: just past its last complete
// line. The caller holds the journal lock (shared is enough).
func (j journal) head() (int64, error) {
	segs, err := j.segments()
	if err != nil || len(segs) == 0 {
		return 0, err
	}
	last := segs[len(segs)-1]
	fd, err := openFile(last.path, syscall.O_RDONLY)
	if err != nil {
		return 0, err
	}
	defer syscall.Close(fd)
	size := fileSizeOr0(last.path)
	for back := int64(4096); ; back *= 4 {
		from := max(0, size-back)
		buf := make([]byte, size-from)
		n, err := syscall.Pread(fd, buf, from)
		if err != nil {
			return 0, &os.PathError{Op: "read", Path: last.path, Err: err}
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return last.start + from + int64(i) + 1, nil
		}
		if from == 0 {
			return last.start, nil
		}
	}
}

// first returns the position of the oldest change the journal holds.
func (j journal) first() (int64, error) {
	segs, err := j.segments()
	if err != nil || len(segs) == 0 {
		return 0, err
	}
	return segs[0].start, nil
}

// errCursor is the error for a position that is not a change boundary of
// this journal.
func errCursor(from string, why string) error {
	return fmt.Errorf("%w: change cursor %q %s: watch from %q (the start) or %q and list again", ckpt.ErrInvalid, from, why, "", ckpt.CursorNow)
}

// reader reads the journal forward from a position.
type reader struct {
	j   journal
	pos int64
	seg segment
	f   *os.File
	off int64 // offset in f of pos
	buf []byte
}

// openReader positions a reader at pos, checking that pos is a change
// boundary of a segment the journal still holds.
func (j journal) openReader(pos int64, cursor string) (*reader, error) {
	segs, err := j.segments()
	if err != nil {
		return nil, err
	}
	i := sort.Search(len(segs), func(i int) bool { return segs[i].start > pos }) - 1
	if i < 0 {
		if len(segs) == 0 && pos == 0 {
			return &reader{j: j, pos: 0}, nil
		}
		return nil, errCursor(cursor, "was pruned or not made by this store")
	}
	r := &reader{j: j, pos: pos, seg: segs[i]}
	if err := r.open(); err != nil {
		return nil, err
	}
	if in := pos - r.seg.start; in > 0 && in < r.off {
		r.close()
		return nil, errCursor(cursor, "is not a change boundary")
	}
	if r.off > 0 {
		b := make([]byte, 1)
		if n, err := r.f.ReadAt(b, r.off-1); n != 1 || b[0] != '\n' {
			r.close()
			if err == io.EOF || n != 1 {
				return nil, errCursor(cursor, "is past the end of the feed")
			}
			return nil, errCursor(cursor, "is not a change boundary")
		}
	}
	return r, nil
}

// open opens r.seg and sets r.off for r.pos (past the header).
func (r *reader) open() error {
	f, err := os.Open(r.seg.path)
	if err != nil {
		return err
	}
	_, hlen, err := headerOf(int(f.Fd()), r.seg.path)
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.off = f, max(r.pos-r.seg.start, hlen)
	return nil
}

func (r *reader) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// decoded turns fn into a line callback that decodes each line and skips
// one that does not decode.
func decoded(fn func(e jentry, end int64) error) func(line []byte, end int64) error {
	return func(line []byte, end int64) error {
		var e jentry
		if json.Unmarshal(line, &e) != nil || e.ID == "" {
			return nil
		}
		return fn(e, end)
	}
}

// The journal reader's buffer: minReadBuf first, doubled while a read
// fills it, up to maxReadBuf (a longer line gets a buffer of its own).
const (
	minReadBuf = 64 << 10
	maxReadBuf = 1 << 20
)

// nextLines is next with each line undecoded (without its newline; valid
// only during the call).
func (r *reader) nextLines(fn func(line []byte, end int64) error) (int, error) {
	if r.f == nil {
		segs, err := r.j.segments()
		if err != nil || len(segs) == 0 {
			return 0, err
		}
		r.seg = segs[0]
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	if cap(r.buf) == 0 {
		// Most reads find a short tail (a listing's page finds none):
		// start small, and grow while reads fill the buffer.
		r.buf = make([]byte, minReadBuf)
	}
	n, err := r.f.ReadAt(r.buf[:cap(r.buf)], r.off)
	if err != nil && err != io.EOF {
		return 0, err
	}
	data := r.buf[:n]
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		if n == cap(r.buf) {
			r.buf = make([]byte, 2*cap(r.buf)) // a line longer than the buffer
			return r.nextLines(fn)
		}
		return 0, nil
	}
	lines := 0
	for pos := 0; pos <= last; {
		nl := pos + bytes.IndexByte(data[pos:], '\n')
		lineEnd := r.seg.start + r.off + int64(nl+1)
		if err := fn(data[pos:nl], lineEnd); err != nil {
			r.off += int64(nl + 1)
			r.pos = lineEnd
			return lines + 1, err
		}
		lines++
		pos = nl + 1
	}
	r.off += int64(last + 1)
	r.pos = r.seg.start + r.off
	if n == cap(r.buf) && n < maxReadBuf {
		r.buf = make([]byte, 2*n) // the lines handed out are done with
	}
	return lines, nil
}

// readAll calls fn for every entry from r's position to the journal's
// current end, across segments.
func (r *reader) readAll(fn func(e jentry, end int64) error) error {
	return r.readAllLines(decoded(fn))
}

// readAllLines is readAll with each line undecoded (see nextLines).
func (r *reader) readAllLines(fn func(line []byte, end int64) error) error {
	for {
		n, err := r.nextLines(fn)
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if r.f == nil {
			return nil // an empty journal
		}
		seg := r.seg
		if err := r.advance(); err != nil {
			return err
		}
		if r.seg == seg {
			return nil // at the end
		}
	}
}

// advance moves r to the next segment when its segment is archived and
// read to the end.
func (r *reader) advance() error {
	if r.seg.active {
		// Archived meanwhile? Then its name is gone and the file is final.
		if h, _, err := readHeader(r.j.active()); err != nil || h.Start == r.seg.start {
			return nil
		}
		r.seg.active = false
		return nil // read what was appended before the rotation first
	}
	segs, err := r.j.segments()
	if err != nil {
		return err
	}
	for _, sg := range segs {
		if sg.start > r.seg.start {
			r.close()
			r.seg, r.pos = sg, max(r.pos, sg.start)
			return r.open()
		}
	}
	return nil
}
