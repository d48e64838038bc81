package filestore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// The index (journal/index) is a snapshot of the journal folded up to a
// position: one line per checkpoint, in ID order, each the latest event
// entry of that checkpoint (with its summary and history size). The index
// plus the journal after its position is the journal's view of the store:
// what List pages through and what reconcile compares the histories with.
const indexName = "index"

// indexHeader is the first line of the index.
type indexHeader struct {
	Index int   `json:"index"`
	Pos   int64 `json:"pos"`   // journal position folded in
	Count int   `json:"count"` // lines that follow
}

const indexVersion = 1

func (j journal) index() string { return j.dir + sep + indexName }

// snapshot is a parsed index: its position and its lines, in ID order,
// undecoded (ids[i] is the ID of lines[i]).
type snapshot struct {
	pos   int64
	ids   []string
	lines [][]byte
}

// readSnapshot reads the index. A missing index is (nil, nil); one that
// does not parse or whose count is wrong (a crash while writing) wraps
// ckpt.ErrCorrupt.
func (j journal) readSnapshot() (*snapshot, error) {
	data, err := os.ReadFile(j.index())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: reading the index: %w", err)
	}
	bad := func(why string) error {
		return fmt.Errorf("%w: journal/index %s; ckpt repair rebuilds it", ckpt.ErrCorrupt, why)
	}
	nl := bytes.IndexByte(data, '\n')
	var h indexHeader
	if nl < 0 || json.Unmarshal(data[:nl], &h) != nil || h.Index != indexVersion {
		return nil, bad("has no valid header")
	}
	sn := &snapshot{pos: h.Pos, ids: make([]string, 0, h.Count), lines: make([][]byte, 0, h.Count)}
	rest := data[nl+1:]
	for len(rest) > 0 {
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return nil, bad("ends in a torn line")
		}
		line := rest[:nl]
		id, ok := lineID(line)
		if !ok || (len(sn.ids) > 0 && id <= sn.ids[len(sn.ids)-1]) {
			return nil, bad(fmt.Sprintf("line %d is damaged or out of order", len(sn.ids)+2))
		}
		sn.ids, sn.lines = append(sn.ids, id), append(sn.lines, line)
		rest = rest[nl+1:]
	}
	if len(sn.ids) != h.Count {
		return nil, bad(fmt.Sprintf("holds %d lines, its header says %d", len(sn.ids), h.Count))
	}
	return sn, nil
}

// lineID returns the ID of an index or journal line without decoding it:
// json.Marshal writes jentry's members in order, kind then id, and no ID
// character needs escaping.
func lineID(line []byte) (string, bool) {
	_, after, ok := bytes.Cut(line, []byte(`,"id":"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(after, '"')
	if end < 0 {
		return "", false
	}
	id := string(after[:end])
	return id, ckpt.ValidateID(id) == nil
}

// writeSnapshot writes the index of entries (sorted here) at pos, durably:
// pruning journal segments relies on it.
func (j journal) writeSnapshot(entries []jentry, pos int64) error {
	sort.Slice(entries, func(a, b int) bool { return entries[a].ID < entries[b].ID })
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	h, _ := json.Marshal(indexHeader{Index: indexVersion, Pos: pos, Count: len(entries)})
	w.Write(append(h, '\n'))
	for i := range entries {
		b, err := json.Marshal(&entries[i])
		if err != nil {
			return fmt.Errorf("filestore: index entry of %s: %w", entries[i].ID, err)
		}
		w.Write(append(b, '\n'))
	}
	w.Flush()
	return atomicfile.WriteFile(j.index(), buf.Bytes(), 0o644)
}

// view is the journal's picture of the store: the latest entry of every
// checkpoint it holds, through position end.
type view struct {
	snap   *snapshot
	tail   map[string]jentry // entries after the snapshot, latest per ID (deleted included)
	tailN  int               // lines after the snapshot
	end    int64
	pruned bool // the journal no longer holds the snapshot's position
}

// loadView reads the index and the journal after it.
func (j journal) loadView() (*view, error) {
	sn, err := j.readSnapshot()
	if err != nil {
		return nil, err
	}
	v := &view{snap: sn, tail: map[string]jentry{}}
	from := int64(0)
	if sn != nil {
		from = sn.pos
	}
	r, err := j.openReader(from, "")
	if err != nil {
		if errors.Is(err, ckpt.ErrInvalid) {
			v.pruned = true
			return v, nil
		}
		return nil, err
	}
	defer r.close()
	err = r.readAll(func(e jentry, end int64) error {
		v.tail[e.ID] = e
		v.tailN++
		return nil
	})
	v.end = r.pos
	return v, err
}

// latest returns the view's latest entry of id; ok is false when the
// journal holds none or the last is a deletion.
func (v *view) latest(id string) (jentry, bool) {
	if e, ok := v.tail[id]; ok {
		return e, e.Kind == ckpt.ChangeEvent
	}
	if v.snap == nil {
		return jentry{}, false
	}
	i := sort.SearchStrings(v.snap.ids, id)
	if i == len(v.snap.ids) || v.snap.ids[i] != id {
		return jentry{}, false
	}
	var e jentry
	if json.Unmarshal(v.snap.lines[i], &e) != nil {
		return jentry{}, false
	}
	return e, true
}

// ids returns every ID the view holds a live entry for, in order.
func (v *view) ids() []string {
	var out []string
	if v.snap != nil {
		for _, id := range v.snap.ids {
			if _, ok := v.tail[id]; !ok {
				out = append(out, id)
			}
		}
	}
	for id, e := range v.tail {
		if e.Kind == ckpt.ChangeEvent {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// entryOf returns the journal entry of event e, which brought checkpoint
// st to its revision with a history of size bytes.
func entryOf(e ckpt.Event, size int64, st *ckpt.Checkpoint) jentry {
	sum := st.Summary()
	sum.Heartbeat.LastBeat, sum.Heartbeat.Presence = time.Time{}, nil
	return jentry{Kind: ckpt.ChangeEvent, ID: st.ID, Rev: e.Seq, Type: e.Type, At: e.At, Sum: e.Sum, Size: size, Summary: &sum}
}
