package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// List implements ckpt.Store from the journal's view (the index and the
// journal after it): it finds the page by binary search on the index,
// filters on ID, status, archived and update time without decoding a
// summary, and opens no state file for an entry that is current. A
// settled listing in bulk trusts every entry (trustView); otherwise an
// entry is current when the history's size is the one it records and
// state.json exists (two stats), and is else read from its files.
// Liveness (the liveness log in bulk, else the beat file) is read for each
// summary returned. A store whose index cannot be read is listed from its
// files (listFiles).
func (s *Store) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	return s.list(ctx, opts, nil)
}

// list is List; with emit (EachSummaryJSON), each summary's JSON goes to
// emit instead of the page.
func (s *Store) list(ctx context.Context, opts ckpt.ListOptions, emit func(row []byte) error) (ckpt.Page, error) {
	page := ckpt.Page{Items: []ckpt.Summary{}}
	if err := ctx.Err(); err != nil {
		return page, err
	}
	if s.linked != nil {
		return page, s.linked
	}
	// Resolving dead writers' markers needs write access; a reader
	// without it lists what the view and the files say (a stale entry is
	// still caught by its history's size). Once settled, the view holds
	// every acknowledged append (see trustView).
	settled := s.settle() == nil
	// Paging through a store (ListAll) reads the journal's tail once, not
	// once per page.
	s.mu.Lock()
	prev := s.listed
	s.mu.Unlock()
	v, err := s.journal().loadViewAfter(prev)
	defer v.close()
	if err != nil || v.pruned || v.snap == nil {
		if emit != nil {
			return s.emitFiles(ctx, opts, emit)
		}
		return s.listFiles(ctx, opts)
	}
	s.mu.Lock()
	s.listed = v
	s.mu.Unlock()
	v.rawTail = emit != nil
	// A listing of many reads every checkpoint's liveness from the
	// liveness log at once; a short page reads its few beat files.
	var live *liveView
	if settled && (opts.Limit <= 0 || opts.Limit >= bulkLiveness) {
		live = s.loadLive(v)
	}
	page, err = s.listView(ctx, v, opts, settled, live, emit)
	// An index of an older version is rewritten at this one as if its
	// tail were long.
	if (v.tailN > compactLines || v.snap.version < indexVersion) && err == nil {
		s.compact(v) // best effort: a failure leaves a longer tail
	}
	return page, err
}

// bulkLiveness is the page size from which a listing reads liveness from
// the liveness log instead of the beat files (ckpt.EachPage and ListAll
// list ckpt.MaxPageSize at a time; `ckpt ls` shows 50).
// (A variable so that a test can page short pages in bulk.)
var bulkLiveness = 200

// listView is List over v; live, when not nil, is every checkpoint's
// liveness (else each beat file is read). With emit, each summary's JSON
// goes to emit instead of the page (whose Items stay empty).
func (s *Store) listView(ctx context.Context, v *view, opts ckpt.ListOptions, settled bool, live *liveView, emit func(row []byte) error) (ckpt.Page, error) {
	batch := max(opts.Limit+1, 256)
	// A full page's room at once: growing it by appends moved every
	// summary of a 1,000-row page several times.
	fill := &pageFill{page: ckpt.Page{Items: make([]ckpt.Summary, 0, min(max(opts.Limit, 1), batch))}, limit: opts.Limit, emit: emit}
	flt := opts.Filter
	from := opts.After + "\x00"
	if opts.After == "" || flt.Prefix > from {
		from = flt.Prefix
	}
	seen := s.seenSince(&flt, live)
	// omitRun counts the entries the quiet hint omitted since the last
	// candidate, which carries it (omitBefore) so that a page counts only
	// the ones before its end.
	quiet := quietHint(&flt, live)
	omitRun := 0
	dir := s.openListDir()
	defer dir.close()
	for done := false; !done; {
		res := s.newResolver(ctx, dir, &flt, settled, batch, emit != nil)
		end, added := true, 0
		v.each(from, seen, func(e ientry) bool {
			if !strings.HasPrefix(e.id, flt.Prefix) {
				return false
			}
			if prefilter(&flt, &e) && (seen == nil || !seen(e.id)) {
				if live != nil {
					rec, readFile := live.lookup(e.id)
					e.bulk, e.beat = !readFile, rec
				}
				if quiet != nil && quietOmits(quiet, &e) {
					// from needs no move: a batch ends at a candidate.
					omitRun++
					return true
				}
				e.omitBefore, omitRun = omitRun, 0
				res.add(e)
				added++
			}
			from = e.id + "\x00"
			if added == batch {
				end = false
				return false
			}
			return true
		}, func(id string) {
			fill.addDamaged(id, errIndexLine(id))
			from = id + "\x00"
		})
		cands, sums, found, errs := res.wait()
		if err := ctx.Err(); err != nil {
			res.release()
			return ckpt.Page{Items: []ckpt.Summary{}}, err
		}
		full, err := fill.take(res, cands, sums, found, errs)
		res.release()
		if err != nil {
			return fill.page, err
		}
		done = full
		if !done && end {
			fill.page.Omitted += fill.carry + omitRun // the last page's tail
		}
		done = done || end
	}
	if fill.damaged != nil {
		slices.Sort(fill.damaged.IDs)
		return fill.page, fill.damaged
	}
	return fill.page, nil
}

// pageFill assembles a listing's page from its resolved batches, or hands
// each row to emit (the page's Items then stay empty).
type pageFill struct {
	page    ckpt.Page
	limit   int
	emit    func(row []byte) error
	carry   int // entries the quiet hint omitted, not yet counted on the page
	damaged *ckpt.DamagedError
}

// addDamaged names id among the checkpoints the listing could not read.
func (f *pageFill) addDamaged(id string, err error) {
	if f.damaged == nil {
		f.damaged = &ckpt.DamagedError{Err: err}
	}
	f.damaged.IDs = append(f.damaged.IDs, id)
}

// take adds one resolved batch (wait's results) to the page in order. It
// reports full when the page reached its limit with a candidate left (Next
// is then set), and emit's error, if any.
func (f *pageFill) take(res *resolver, cands []ientry, sums []ckpt.Summary, found []bool, errs []error) (full bool, err error) {
	for i := range cands {
		f.carry += cands[i].omitBefore
		if errs[i] != nil {
			f.addDamaged(cands[i].id, errs[i])
			continue
		}
		if !found[i] {
			continue
		}
		if f.emit != nil {
			if err := emitRow(f.emit, res.rows[i], &sums[i]); err != nil {
				return false, err
			}
			continue
		}
		if f.limit > 0 && len(f.page.Items) == f.limit {
			f.page.Next = f.page.Items[len(f.page.Items)-1].ID
			return true, nil
		}
		f.page.Items = append(f.page.Items, sums[i])
		f.page.Omitted += f.carry
		f.carry = 0
	}
	return false, nil
}

// seenSince is the test of a checkpoint that SeenBefore rules out, or nil
// when flt has none: a checkpoint whose beat hint shows it seen since then
// cannot match, and its index line is not even parsed.
func (s *Store) seenSince(flt *ckpt.Filter, live *liveView) func(id string) bool {
	before, prefix := flt.SeenBefore.UnixNano(), flt.Prefix
	switch {
	case flt.SeenBefore.IsZero():
		return nil
	case live != nil:
		return func(id string) bool { return live.seenSince(id, before) && strings.HasPrefix(id, prefix) }
	default:
		hints := s.journal().beatHints()
		return func(id string) bool { return hints[id] >= before && strings.HasPrefix(id, prefix) }
	}
}

// quietHint is a stale report's hint (ckpt.Quiet), taken only when nothing
// but the index's fields filters (an entry it omits is counted, not
// resolved); nil otherwise.
func quietHint(flt *ckpt.Filter, live *liveView) *ckpt.Quiet {
	if live == nil || flt.Agent != "" || flt.Parent != "" || flt.Label != "" || !flt.SeenBefore.IsZero() {
		return nil
	}
	return flt.Quiet
}

// emitRow hands row to emit; a nil row is a summary that did not encode,
// encoded again for its error.
func emitRow(emit func([]byte) error, row []byte, sum *ckpt.Summary) error {
	if row == nil {
		if _, err := wire.Append(nil, sum); err != nil {
			return err
		}
	}
	return emit(row)
}

func errIndexLine(id string) error {
	return errors.New("journal/index: its line of " + id + " is damaged; a repair rebuilds the index")
}

// prefilter reports whether e may pass f, judged on the index's fields
// only; the summary itself is matched later.
func prefilter(f *ckpt.Filter, e *ientry) bool {
	if e.unknown {
		return true // judged on what its files say
	}
	if e.archived && !f.IncludeArchived {
		return false
	}
	if len(f.Status) > 0 && !slices.Contains(f.Status, e.status) {
		return false
	}
	if !f.UpdatedSince.IsZero() && e.updated < f.UpdatedSince.UnixNano() {
		return false
	}
	// LastSeen is at least UpdatedAt.
	return f.SeenBefore.IsZero() || e.updated < f.SeenBefore.UnixNano()
}

// summaryFor sets *sum to e's summary with liveness and reports whether
// f matches it. settled says the listing's settle succeeded (see
// trustView). When e carries its liveness from the liveness log (bulk), a
// settled listing reads nothing for it (see "Liveness in bulk").
func (s *Store) summaryFor(dir listDir, e ientry, flt *ckpt.Filter, settled bool, sum *ckpt.Summary) (bool, error) {
	at, p, trusted := s.livenessOf(dir, e, settled)
	return s.summaryWith(dir, e, flt, trusted, at, p, sum)
}

// livenessOf returns e's liveness (at, p) and whether its view may be
// trusted without a stat (see trustView).
func (s *Store) livenessOf(dir listDir, e ientry, settled bool) (time.Time, ckpt.Presence, bool) {
	var at time.Time
	var p ckpt.Presence
	if e.bulk {
		if e.beat != nil {
			at, p = parseBeat(e.beat)
		}
		// The liveness log of this boot stands for every beat file
		// (none means never beaten): once settled, the view is trusted.
		return at, p, settled
	}
	at, size := dir.beat(e.id)
	if size > 0 {
		// Only a beat file that holds a record is read; its time wins
		// over the file's (which a copy resets).
		if b, err := readNoFollow(s.files(e.id).beat()); err == nil {
			var seen time.Time
			if seen, p = parseBeat(b); !seen.IsZero() {
				at = seen
			}
		}
	}
	return at, p, settled && !at.IsZero()
}

// summaryWith is summaryFor once e's liveness is known (at, p); trusted
// says the view's summary may be used without a stat (see trustView).
func (s *Store) summaryWith(dir listDir, e ientry, flt *ckpt.Filter, trusted bool, at time.Time, p ckpt.Presence, sum *ckpt.Summary) (bool, error) {
	if !flt.SeenBefore.IsZero() && !at.Before(flt.SeenBefore) {
		return false, nil // seen since: no need to read more
	}
	if !trustView(e, trusted, sum) {
		cur, err := s.currentSummary(dir, e)
		if err != nil || cur == nil {
			return false, err
		}
		*sum = *cur
	}
	sum.Heartbeat.LastBeat, sum.Heartbeat.Presence = at, nil
	if !p.IsZero() {
		sum.Heartbeat.Presence = &p
	}
	return flt.MatchSummary(sum), nil
}

// trustView sets *sum to e's own summary when the view can be trusted without
// a stat: the listing settled (every dead writer's marker resolved, the
// journal reconciled under this boot, so the view holds every append that
// was acknowledged; a live writer's append is not acknowledged before its
// journal line; a repair journals the histories it rewrites) and either
// the listing reads liveness in bulk from a liveness log of this boot
// (every checkpoint, beating or not: no file of any is read) or the
// checkpoint's beat file exists, which proves its directory is there (a
// short page does not list a checkpoint removed by hand). It returns
// false otherwise, and the caller stats the files (currentSummary). What a
// trusted view does not show is a history changed behind the store's back
// (edited, damaged or removed by hand): ckpt check reports it and ckpt
// repair journals it.
func trustView(e ientry, trusted bool, sum *ckpt.Summary) bool {
	if !trusted || e.unknown {
		return false
	}
	// On an error: read from the files, which report the damage.
	return e.summaryInto(sum) == nil
}

// currentSummary returns the summary of e's checkpoint without liveness:
// e's own when e is current (its history has the size e records and
// state.json exists: two stats), else read from the files, which finds
// damage a missing state.json would otherwise hide; nil when the
// checkpoint is gone.
func (s *Store) currentSummary(dir listDir, e ientry) (*ckpt.Summary, error) {
	size, missing, ok := dir.historySize(e.id)
	if missing {
		return nil, nil
	}
	if ok && size == e.size && dir.exists(e.id, stateName) {
		if sum, err := e.summaryOf(); err == nil {
			return &sum, nil
		}
	}
	cur, err := s.load(s.files(e.id))
	if err != nil || cur.state == nil {
		return nil, err
	}
	sum := cur.state.Summary()
	sum.Heartbeat.LastBeat, sum.Heartbeat.Presence = time.Time{}, nil
	return &sum, nil
}

// compact folds v into a new index at v.end and prunes the journal
// segments the new index makes unneeded (keeping keepSegments of them for
// watchers behind). Concurrent compactions each write a valid index.
func (s *Store) compact(v *view) error {
	if err := s.writeCompacted(v); err != nil {
		return err
	}
	jl, err := s.journal().lockJournal(true)
	if err != nil {
		return err
	}
	defer jl.unlock()
	return s.journal().pruneLocked()
}

// compactLocked is compact for a caller holding the journal lock.
func (s *Store) compactLocked(v *view) error {
	if err := s.writeCompacted(v); err != nil {
		return err
	}
	return s.journal().pruneLocked()
}

// writeCompacted writes the index of v at v.end.
func (s *Store) writeCompacted(v *view) error {
	var lines [][]byte
	var err error
	v.merge("", func(e ientry, line []byte) bool {
		if line != nil && v.snap.version == indexVersion {
			lines = append(lines, append(line[:len(line):len(line)], '\n'))
			return true
		}
		if line != nil {
			// An older index's line, rewritten at this version (one
			// that does not parse: from its checkpoint's files).
			if parsed, ok := parseIndexLine(line, v.snap.version); ok {
				e = parsed
			}
		}
		if e.deleted {
			return true
		}
		je := jentry{ID: e.id, Rev: e.rev, Size: e.size, Summary: e.decoded}
		if je.Summary == nil && e.summary != nil {
			if sum, serr := e.summaryOf(); serr == nil {
				je.Summary = &sum
			}
		}
		if je.Summary == nil {
			var ok bool
			if je, ok = s.currentEntry(s.files(e.id)); !ok {
				// Only a checkpoint that is gone leaves the index; one
				// that cannot be read now (damage, a passing failure)
				// keeps this compaction from dropping it.
				if _, err = os.Lstat(s.files(e.id).history()); errors.Is(err, fs.ErrNotExist) {
					err = nil
					return true
				}
				err = fmt.Errorf("filestore: compacting the journal: %s cannot be read (%v); the journal keeps its tail", e.id, err)
				return false
			}
		}
		var l []byte
		if l, err = encodeIndexLine(je); err != nil {
			return false
		}
		lines = append(lines, l)
		return true
	})
	if err != nil {
		return err
	}
	return s.journal().writeIndex(lines, v.end)
}

// pruneLocked removes the archived segments that end at or before the
// index's position, but the newest keepSegments of them. The caller holds
// the journal lock.
func (j journal) pruneLocked() error {
	sn, err := j.readSnapshot()
	if err != nil || sn == nil {
		return err
	}
	sn.close() // only its position is needed
	segs, err := j.segments()
	if err != nil {
		return err
	}
	var old []segment
	for _, sg := range segs {
		if !sg.active && sg.start+fileSizeOr0(sg.path) <= sn.pos {
			old = append(old, sg)
		}
	}
	for len(old) > keepSegments {
		if err := os.Remove(old[0].path); err != nil {
			return err
		}
		old = old[1:]
	}
	return nil
}
