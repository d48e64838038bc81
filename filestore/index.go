package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"sort"
	"strconv"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// The index (journal/index) is the journal folded up to a position: one
// line per checkpoint, in ID order, each from that checkpoint's latest
// event entry. Its first line is a header. Each further line is
//
//	<id> TAB <rev> TAB <history size> TAB <updated_at, Unix ns> TAB <status> TAB <a|-> TAB <heartbeat interval, ns> TAB <summary JSON>
//
// so that List finds a page by binary search and filters on ID, status,
// archived and update time, and a stale report leaves out a checkpoint
// seen within its warn threshold (ckpt.Quiet), without decoding a
// summary. A version 1 index (before the interval) is still read, its
// intervals unknown, and rewritten at version 2 by the next listing. The index plus the
// journal after its position is the journal's view of the store: what List
// pages through and what reconcile compares the histories with.
const indexName = "index"

// indexHeader is the first line of the index.
type indexHeader struct {
	Index int   `json:"index"`
	Pos   int64 `json:"pos"`   // journal position folded in
	Count int   `json:"count"` // lines that follow
}

// indexVersion is the version the index is written at; readSnapshot
// also reads version 1 (no interval field).
const indexVersion = 2

func (j journal) index() string { return j.dir + sep + indexName }

// ientry is one checkpoint's entry in the view: an index line or a journal
// line after the index's position.
type ientry struct {
	id       string
	rev      int64
	size     int64
	updated  int64 // UpdatedAt, Unix ns
	interval int64 // Heartbeat.Interval, ns; -1 when unknown (a version 1 index line)
	status   ckpt.Status
	archived bool
	deleted  bool
	summary  []byte // the summary's JSON (an index line)
	// hbStart and hbEnd, when hbEnd > 0, locate the heartbeat object of
	// a summary already found in the encoder's form (resolvedRaw), whose
	// ID is id and status status.
	hbStart, hbEnd int32
	decoded        *ckpt.Summary // the summary (a journal line)
	// raw is a journal line not yet decoded (see lazyEntry): only its ID
	// is known until resolved decodes it.
	raw []byte
	// unknown marks a journal line that did not decode after all: the
	// checkpoint is read from its files (no size matches -1).
	unknown bool
	// bulk says beat holds the checkpoint's liveness record from the
	// liveness log (nil: never beat), so its beat file is not read.
	bulk bool
	beat []byte
	// omitBefore counts the entries a listing left out under
	// ckpt.Quiet between the previous candidate and this one.
	omitBefore int
}

// lazyEntry returns the view entry of a journal line (an event's) with
// only its ID read, leaving the rest to resolved: loading the view then
// costs a scan of each line, not a JSON decode of its summary, and a page
// decodes only the tail entries it reaches. ok is false for a line not in
// the form Append writes ({"kind":"event","id":"…",…}), or a deletion:
// decode those at once.
func lazyEntry(line []byte) (ientry, bool) {
	const head = `{"kind":"event","id":"`
	if !bytes.HasPrefix(line, []byte(head)) {
		return ientry{}, false
	}
	rest := line[len(head):]
	q := bytes.IndexByte(rest, '"')
	if q <= 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return ientry{}, false
	}
	id := string(rest[:q])
	if ckpt.ValidateID(id) != nil {
		return ientry{}, false
	}
	return ientry{id: id, raw: bytes.Clone(line)}, true
}

// resolved returns e decoded, if it is a lazy entry. A line that does not
// decode (or names another ID) resolves to an unknown entry.
func (e ientry) resolved() ientry {
	if e.raw == nil {
		return e
	}
	je, ok := decodeEntry(e.raw)
	if !ok {
		je = jentry{}
	}
	if !ok && json.Unmarshal(e.raw, &je) != nil {
		return ientry{id: e.id, rev: -1, size: -1, interval: -1, unknown: true}
	}
	if je.ID != e.id || je.Kind != ckpt.ChangeEvent {
		return ientry{id: e.id, rev: -1, size: -1, interval: -1, unknown: true}
	}
	return ientryOf(je)
}

// encodeIndexLine returns e's index line.
func encodeIndexLine(e jentry) ([]byte, error) {
	sum, err := json.Marshal(e.Summary)
	if err != nil {
		return nil, fmt.Errorf("filestore: index entry of %s: %w", e.ID, err)
	}
	arch := "-"
	if e.Summary.Archived != nil {
		arch = "a"
	}
	out := make([]byte, 0, len(sum)+len(e.ID)+64)
	out = append(out, e.ID...)
	out = append(out, '\t')
	out = strconv.AppendInt(out, e.Rev, 10)
	out = append(out, '\t')
	out = strconv.AppendInt(out, e.Size, 10)
	out = append(out, '\t')
	out = strconv.AppendInt(out, e.Summary.UpdatedAt.UnixNano(), 10)
	out = append(out, '\t')
	out = append(out, e.Summary.Status...)
	out = append(out, '\t')
	out = append(out, arch...)
	out = append(out, '\t')
	out = strconv.AppendInt(out, int64(e.Summary.Heartbeat.Interval), 10)
	out = append(out, '\t')
	out = append(out, sum...)
	return append(out, '\n'), nil
}

// parseIndexLine parses an index line of the given version (without its
// newline). A version 1 line has no interval field (interval -1).
func parseIndexLine(line []byte, version int) (ientry, bool) {
	return parseIndexLineOf(line, version, "")
}

// parseIndexLineOf is parseIndexLine for a line whose ID the caller has
// read already (id, when not ""), which it then does not copy again.
func parseIndexLineOf(line []byte, version int, id string) (ientry, bool) {
	var f [7][]byte
	n := 7
	if version == 1 {
		n = 6
	}
	rest := line
	for i := range n {
		tab := bytes.IndexByte(rest, '\t')
		if tab < 0 {
			return ientry{}, false
		}
		f[i], rest = rest[:tab], rest[tab+1:]
	}
	if id == "" || id != string(f[0]) {
		id = string(f[0])
	}
	e := ientry{id: id, status: statusOf(f[4]), archived: string(f[5]) == "a", summary: rest, interval: -1}
	var ok1, ok2, ok3, ok4 bool
	e.rev, ok1 = parseDec(f[1])
	e.size, ok2 = parseDec(f[2])
	e.updated, ok3 = parseDec(f[3])
	ok4 = n == 6
	if n == 7 {
		e.interval, ok4 = parseDec(f[6])
		ok4 = ok4 && e.interval >= 0
	}
	if !ok1 || !ok2 || !ok3 || !ok4 || ckpt.ValidateID(e.id) != nil || len(rest) == 0 || rest[0] != '{' {
		return ientry{}, false
	}
	return e, true
}

// parseDec reads a decimal int64 as strconv.ParseInt(s, 10, 64) does,
// without making a string of it.
func parseDec(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	digits := b
	if neg || len(b) > 0 && b[0] == '+' {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 18 { // up to 18 digits cannot overflow
		n, err := strconv.ParseInt(string(b), 10, 64)
		return n, err == nil
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// statusOf returns the status named by b, sharing the string of a known
// one.
func statusOf(b []byte) ckpt.Status {
	for _, st := range knownStatuses {
		if string(b) == string(st) {
			return st
		}
	}
	return ckpt.Status(b)
}

var knownStatuses = []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked, ckpt.StatusDone,
	ckpt.StatusPending, ckpt.StatusFailed, ckpt.StatusAbandoned}

// ientryOf turns a journal entry into a view entry.
func ientryOf(e jentry) ientry {
	ie := ientry{id: e.ID, rev: e.Rev, size: e.Size, deleted: e.Kind == ckpt.ChangeDeleted, interval: -1}
	if e.Summary != nil {
		ie.decoded = e.Summary
		ie.updated = e.Summary.UpdatedAt.UnixNano()
		ie.interval = int64(e.Summary.Heartbeat.Interval)
		ie.status = e.Summary.Status
		ie.archived = e.Summary.Archived != nil
	}
	return ie
}

// summaryOf decodes e's summary (without liveness).
func (e ientry) summaryOf() (ckpt.Summary, error) {
	var s ckpt.Summary
	err := e.summaryInto(&s)
	return s, err
}

// summaryInto is summaryOf decoding into *s (a listing's page slot), which
// it overwrites whole.
func (e ientry) summaryInto(s *ckpt.Summary) error {
	if e.decoded != nil {
		*s = *e.decoded
		return nil
	}
	if err := wire.Unmarshal(e.summary, s); err != nil {
		return fmt.Errorf("%w: journal/index: the entry of %s does not decode (%v); a repair rebuilds the index", ckpt.ErrCorrupt, e.id, err)
	}
	return nil
}

// snapshot is the index file, mapped into memory (mmapIndex): its position
// and its lines, found by offset. Close it (view.close) when done; nothing
// taken from it may outlive that but copies.
type snapshot struct {
	ident   fileIdent
	version int // 1 or indexVersion
	pos     int64
	count   int
	data    []byte // the lines after the header
	mapped  []byte // the whole mapping, for unmap
}

// readSnapshot maps the index. A missing index is (nil, nil); one whose
// header does not parse or that does not end in a newline wraps
// ckpt.ErrCorrupt. Lines are parsed when used.
func (j journal) readSnapshot() (*snapshot, error) {
	data, ident, err := mmapIndex(j.index())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: reading the index: %w", err)
	}
	nl := bytes.IndexByte(data, '\n')
	var h indexHeader
	if nl < 0 || json.Unmarshal(data[:nl], &h) != nil || (h.Index != 1 && h.Index != indexVersion) || data[len(data)-1] != '\n' {
		unmapIndex(data)
		return nil, fmt.Errorf("%w: journal/index has no valid header or a torn end; a repair rebuilds it", ckpt.ErrCorrupt)
	}
	return &snapshot{ident: ident, version: h.Index, pos: h.Pos, count: h.Count, data: data[nl+1:], mapped: data}, nil
}

func (sn *snapshot) close() {
	if sn != nil && sn.mapped != nil {
		unmapIndex(sn.mapped)
		sn.mapped, sn.data = nil, nil
	}
}

// lineAt returns the line that starts at offset p, without its newline,
// and the offset of the next line.
func (sn *snapshot) lineAt(p int) ([]byte, int) {
	nl := bytes.IndexByte(sn.data[p:], '\n')
	return sn.data[p : p+nl], p + nl + 1
}

// idAt returns the ID of the line at offset p.
func (sn *snapshot) idAt(p int) string {
	l, _ := sn.lineAt(p)
	if tab := bytes.IndexByte(l, '\t'); tab >= 0 {
		l = l[:tab]
	}
	return string(l)
}

// search returns the offset of the first line whose ID is >= id (len(data)
// when none is), by bisecting byte offsets and scanning the last stretch.
func (sn *snapshot) search(id string) int {
	lo, hi := 0, len(sn.data) // lines before lo have smaller IDs; hi is a line start or the end
	for hi-lo > 8192 {
		m := (lo + hi) / 2
		m += bytes.IndexByte(sn.data[m:], '\n') + 1 // the next line start
		if m >= hi {
			break
		}
		if sn.idAt(m) < id {
			lo = m
		} else {
			hi = m
		}
	}
	for p := lo; p < hi; {
		if sn.idAt(p) >= id {
			return p
		}
		_, p = sn.lineAt(p)
	}
	return hi
}

// firstBad describes the first damaged or out-of-order line, or a count
// that is not the header's; "" when the index is sound.
func (sn *snapshot) firstBad() string {
	prev, n := "", 0
	for p := 0; p < len(sn.data); n++ {
		line, next := sn.lineAt(p)
		e, ok := parseIndexLine(line, sn.version)
		if !ok || (n > 0 && e.id <= prev) {
			return fmt.Sprintf("line %d is damaged or out of order", n+2)
		}
		prev, p = e.id, next
	}
	if n != sn.count {
		return fmt.Sprintf("holds %d lines, its header says %d", n, sn.count)
	}
	return ""
}

// entryAt parses the line at offset p.
func (sn *snapshot) entryAt(p int) (ientry, error) {
	l, _ := sn.lineAt(p)
	e, ok := parseIndexLine(l, sn.version)
	if !ok {
		return e, fmt.Errorf("%w: journal/index: the line at byte %d is damaged; a repair rebuilds it", ckpt.ErrCorrupt, p)
	}
	return e, nil
}

// writeIndex writes the index at pos from lines (index lines, each ending
// in a newline, in ID order), durably: pruning journal segments relies on
// it.
func (j journal) writeIndex(lines [][]byte, pos int64) error {
	h, _ := json.Marshal(indexHeader{Index: indexVersion, Pos: pos, Count: len(lines)})
	n := len(h) + 1
	for _, l := range lines {
		n += len(l)
	}
	buf := make([]byte, 0, n)
	buf = append(append(buf, h...), '\n')
	for _, l := range lines {
		buf = append(buf, l...)
	}
	return atomicfile.WriteFile(j.index(), buf, 0o644)
}

// writeSnapshot writes the index of entries at pos.
func (j journal) writeSnapshot(entries []jentry, pos int64) error {
	sort.Slice(entries, func(a, b int) bool { return entries[a].ID < entries[b].ID })
	lines := make([][]byte, 0, len(entries))
	for i := range entries {
		l, err := encodeIndexLine(entries[i])
		if err != nil {
			return err
		}
		lines = append(lines, l)
	}
	return j.writeIndex(lines, pos)
}

// view is the journal's picture of the store: the latest entry of every
// checkpoint it holds, through position end.
type view struct {
	snap    *snapshot
	tail    map[string]ientry // entries after the snapshot, latest per ID (deleted included)
	tailIDs []string          // the keys of tail, sorted
	tailN   int               // lines after the snapshot
	end     int64
	pruned  bool // the journal no longer holds the snapshot's position
	// rawTail resolves tail entries with their summary's bytes rather
	// than decoded (resolvedRaw): set by a listing that copies them.
	rawTail bool

	snapIdent fileIdent // the index the tail continues (loadViewAfter)
	snapPos   int64
}

// loadView reads the index and the journal after it.
func (j journal) loadView() (*view, error) { return j.loadViewAfter(nil) }

// loadViewAfter is loadView continuing prev (a view of an earlier call,
// closed or not) when the index is still the one prev mapped: only the
// journal lines after prev's end are read. prev's tail is shared, never
// changed: a view that read more has a copy.
func (j journal) loadViewAfter(prev *view) (*view, error) {
	sn, err := j.readSnapshot()
	if err != nil {
		return nil, err
	}
	v := &view{snap: sn, tail: map[string]ientry{}}
	from := int64(0)
	if sn != nil {
		from = sn.pos
	}
	shared := false
	if prev != nil && !prev.pruned && sn != nil && prev.snapIdent == sn.ident && prev.snapPos == sn.pos {
		v.tail, v.tailIDs, v.tailN, from, shared = prev.tail, prev.tailIDs, prev.tailN, prev.end, true
	}
	if sn != nil {
		v.snapIdent, v.snapPos = sn.ident, sn.pos
	}
	r, err := j.openReader(from, "")
	if err != nil {
		if errors.Is(err, ckpt.ErrInvalid) {
			v.pruned = true
			return v, nil
		}
		v.close()
		return nil, err
	}
	defer r.close()
	added := false
	err = r.readAllLines(func(line []byte, end int64) error {
		e, ok := lazyEntry(line)
		if !ok {
			var je jentry
			if json.Unmarshal(line, &je) != nil || je.ID == "" {
				return nil // skipped, as by every reader
			}
			e = ientryOf(je)
		}
		if shared {
			v.tail, shared = maps.Clone(v.tail), false
		}
		v.tail[e.id] = e
		v.tailN++
		added = true
		return nil
	})
	v.end = r.pos
	if err != nil {
		v.close()
		return nil, err
	}
	if added {
		v.tailIDs = v.tailIDs[:0:0]
		for id := range v.tail {
			v.tailIDs = append(v.tailIDs, id)
		}
		sort.Strings(v.tailIDs)
	}
	return v, err
}

// latest returns the view's latest entry of id; ok is false when the
// journal holds none or the last is a deletion.
func (v *view) latest(id string) (ientry, bool) {
	if e, ok := v.tail[id]; ok {
		e = e.resolved()
		return e, !e.deleted
	}
	if v.snap == nil {
		return ientry{}, false
	}
	p := v.snap.search(id)
	if p == len(v.snap.data) || v.snap.idAt(p) != id {
		return ientry{}, false
	}
	e, err := v.snap.entryAt(p)
	return e, err == nil
}

// close releases the view's mapping of the index.
func (v *view) close() {
	if v != nil {
		v.snap.close()
	}
}

// ids returns every ID the view holds a live entry for, in order.
func (v *view) ids() []string {
	var out []string
	v.each("", nil, func(e ientry) bool { out = append(out, e.id); return true }, func(string) {})
	return out
}

// each calls fn with the view's live entries whose ID is >= from, in ID
// order, until fn returns false. An index line whose ID skip (if not nil)
// approves is passed over without being parsed; a damaged one goes to bad.
func (v *view) each(from string, skip func(id string) bool, fn func(ientry) bool, bad func(id string)) {
	v.merge(from, func(e ientry, line []byte) bool {
		if line != nil && skip != nil && skip(e.id) {
			return true
		}
		if line != nil {
			parsed, ok := parseIndexLineOf(line, v.snap.version, e.id)
			if !ok {
				bad(e.id)
				return true
			}
			e = parsed
		}
		return e.deleted || fn(e)
	})
}

// merge walks the index lines and the tail entries whose ID is >= from in
// ID order, a tail entry replacing the index line of its ID: fn gets an
// index line (e holds only its ID) or a tail entry (line is nil), until it
// returns false.
func (v *view) merge(from string, fn func(e ientry, line []byte) bool) {
	p, n := 0, 0
	if v.snap != nil {
		n = len(v.snap.data)
		p = v.snap.search(from)
	}
	k := sort.SearchStrings(v.tailIDs, from)
	for p < n || k < len(v.tailIDs) {
		if p < n {
			// One scan of the line; its ID compared in place.
			line, next := v.snap.lineAt(p)
			idb := line
			if tab := bytes.IndexByte(line, '\t'); tab >= 0 {
				idb = line[:tab]
			}
			if k == len(v.tailIDs) || string(idb) < v.tailIDs[k] {
				p = next
				if !fn(ientry{id: string(idb)}, line) {
					return
				}
				continue
			}
			if string(idb) == v.tailIDs[k] {
				p = next
			}
		}
		e := v.tail[v.tailIDs[k]]
		if v.rawTail {
			e = e.resolvedRaw()
		} else {
			e = e.resolved()
		}
		k++
		if !fn(e, nil) {
			return
		}
	}
}

// entryOf returns the journal entry of event e, which brought checkpoint
// st to its revision with a history of size bytes.
func entryOf(e ckpt.Event, size int64, st *ckpt.Checkpoint) jentry {
	sum := st.Summary()
	sum.Heartbeat.LastBeat, sum.Heartbeat.Presence = time.Time{}, nil
	return jentry{Kind: ckpt.ChangeEvent, ID: st.ID, Rev: e.Seq, Type: e.Type, At: e.At, Sum: e.Sum, Size: size, Summary: &sum}
}
