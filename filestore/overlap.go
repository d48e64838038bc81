package filestore

import (
	"fmt"

	"github.com/ckpt-dev/ckpt"
)

// afterSync is the work of an append that follows its durability point but
// does not depend on it: the encodings of state.json and of the journal
// line, the result's copy of the state and its liveness. It runs while the
// history line's writeback is in flight: after the line's write, the
// append starts the writeback (sync_file_range, which does not wait), does
// this work, and only then calls fdatasync, which waits for what is left.
// The disk works while the CPU does, on one thread: a goroutine doing the
// same beside a blocking fdatasync cost 36-62 µs more CPU per append in
// thread wake-ups and lowered the wall time only in some runs
// (docs/design.md, "Issue 22, round three: overlapping the sync").
//
// prepare writes nothing: every write it prepares happens after the
// fdatasync, in the write order of docs/design.md, so no file ever claims
// more history than is durable.
type afterSync struct {
	env    []byte // state.json's new content (encodeEnvelope)
	envErr error
	jline  []byte // the journal line, with its newline
	jerr   error
	out    *ckpt.Checkpoint // the result: a copy of the new state with its liveness
}

// prepare fills a from the new state next, reached by event stored whose
// line ends the history at byte end. It only reads next and, through dfd,
// the beat file.
func (a *afterSync) prepare(f files, dfd int, stored ckpt.Event, next *ckpt.Checkpoint, end int64) {
	a.env, a.envErr = encodeEnvelope(next, stored.Sum, end)
	e := entryOf(stored, end, next)
	if line, err := appendEntry(nil, &e); err != nil {
		a.jerr = fmt.Errorf("filestore: journal entry for %s: %w", e.ID, err)
	} else {
		a.jline = append(line, '\n')
	}
	a.out = next.Clone()
	fillLivenessIn(dfd, a.out, f)
}

// runOnce runs f if it is not nil.
func runOnce(f func()) {
	if f != nil {
		f()
	}
}
