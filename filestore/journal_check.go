package filestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// examineJournal checks the change journal and its index against the
// checkpoints (a whole-store check or repair, after the checkpoints are
// done). Check reads only. Repair resolves dead writers' pending markers,
// journals what the journal lacks (reconcile) and rebuilds an index that
// cannot be read (the feed then restarts after a gap, so old cursors are
// refused rather than misread). Everything here is a warning: the
// histories are whole, and repair loses nothing.
func (s *Store) examineJournal(repair bool) []ckpt.Problem {
	found := s.journalProblems()
	if !repair || len(found) == 0 {
		return found
	}
	err := s.settle()
	if err == nil {
		var jl *jlock
		if jl, err = s.lockJournalReady(); err == nil {
			err = s.repairJournal()
			jl.unlock()
		}
		if err == nil {
			err = s.rebuildLive()
		}
	}
	for i := range found {
		found[i].Fixed = err == nil
		if err != nil {
			found[i].What += fmt.Sprintf(" (repair failed: %v)", err)
		}
	}
	if err == nil {
		if after := s.journalProblems(); len(after) > 0 {
			for _, p := range after {
				p.What = "after repair: " + p.What
				found = append(found, p)
			}
		}
	}
	return found
}

// repairJournal rebuilds an unreadable index, else journals what is
// missing and folds the journal into a fresh index. The caller holds the
// journal lock.
func (s *Store) repairJournal() error {
	v, err := s.journal().loadView()
	if err != nil || v.pruned || v.snap == nil {
		v.close()
		return s.rebuildJournal()
	}
	v.close()
	if err := s.reconcile(false); err != nil {
		return err
	}
	if v, err = s.journal().loadView(); err != nil {
		return err
	}
	defer v.close()
	return s.compactLocked(v)
}

// journalProblems lists what is wrong with the journal, reading only.
func (s *Store) journalProblems() []ckpt.Problem {
	j := s.journal()
	warn := func(id, what, fix string) ckpt.Problem {
		return ckpt.Problem{ID: id, Severity: ckpt.SeverityWarning, What: what, Repair: fix}
	}
	if _, err := os.Lstat(j.dir); errors.Is(err, fs.ErrNotExist) {
		return []ckpt.Problem{warn("", "journal/ is missing: the store has no change feed or index yet (made before them)", "ckpt repair, or any write")}
	}
	var out []ckpt.Problem
	v, err := j.loadView()
	defer v.close()
	switch {
	case err != nil:
		return append(out, warn("", fmt.Sprintf("the change journal cannot be read: %v", reason(err)), "ckpt repair (rebuilds the index; watchers list again)"))
	case v.snap == nil:
		return append(out, warn("", "journal/index is missing", "ckpt repair"))
	case v.pruned:
		return append(out, warn("", "journal/index is older than the oldest journal segment kept", "ckpt repair"))
	}
	if p := v.snap.firstBad(); p != "" {
		return append(out, warn("", "journal/index "+p, "ckpt repair"))
	}
	out = append(out, s.pendingProblems()...)
	ids, err := s.ids("")
	if err != nil {
		return append(out, warn("", err.Error(), "ckpt check again"))
	}
	onDisk := map[string]bool{}
	for _, id := range ids {
		onDisk[id] = true
		if p, ok := s.journalBehind(v, id); ok {
			out = append(out, p)
		}
	}
	out = append(out, s.liveProblems(ids)...)
	return append(out, s.unjournaledDeletes(v, onDisk)...)
}

// unjournaledDeletes reports the checkpoints the view holds that are gone.
// Deletes hold tmp/ locked (shared) until they have journaled, so the
// view is read again with tmp/ held exclusively: a delete in progress is
// not a problem.
func (s *Store) unjournaledDeletes(v *view, onDisk map[string]bool) []ckpt.Problem {
	gone := false
	for _, id := range v.ids() {
		gone = gone || !onDisk[id]
	}
	if !gone {
		return nil
	}
	release, busy, err := tryLockDir(filepath.Join(s.dir, tmpDir), true)
	if err != nil || busy {
		return nil
	}
	defer release()
	if v, err = s.journal().loadView(); err != nil {
		return nil
	}
	defer v.close()
	var out []ckpt.Problem
	for _, id := range v.ids() {
		if _, err := os.Lstat(s.files(id).dir); errors.Is(err, fs.ErrNotExist) {
			out = append(out, ckpt.Problem{ID: id, Severity: ckpt.SeverityWarning,
				What:   fmt.Sprintf("%s is gone but the change journal never recorded its deletion", id),
				Repair: "ckpt repair"})
		}
	}
	return out
}

// journalBehind reports checkpoint id if the journal's view of it is not
// its history, looking again under its shared lock so that a write in
// progress is not taken for a gap.
func (s *Store) journalBehind(v *view, id string) (ckpt.Problem, bool) {
	f := s.files(id)
	e, ok := v.latest(id)
	if ok && fileSizeOr0(f.history()) == e.size {
		return ckpt.Problem{}, false
	}
	release, gone, err := lockShared(f.dir)
	if err != nil || gone {
		return ckpt.Problem{}, false
	}
	defer release()
	cur, err := s.load(f)
	if err != nil || cur.state == nil {
		return ckpt.Problem{}, false // the history's damage is reported on its own
	}
	if v, err = s.journal().loadView(); err != nil {
		return ckpt.Problem{}, false
	}
	defer v.close()
	e, ok = v.latest(id)
	switch {
	case !ok:
		return ckpt.Problem{ID: id, Severity: ckpt.SeverityWarning,
			What:   fmt.Sprintf("%s: the change journal and index do not know this checkpoint (revision %d): it is missing from listings and from the feed", id, cur.rev()),
			Repair: "ckpt repair"}, true
	case e.rev < cur.rev():
		return ckpt.Problem{ID: id, Severity: ckpt.SeverityWarning,
			What:   fmt.Sprintf("%s: the change journal stops at revision %d of %d (a writer died between the history and the journal)", id, e.rev, cur.rev()),
			Repair: "ckpt repair"}, true
	case e.size != cur.end:
		return ckpt.Problem{ID: id, Severity: ckpt.SeverityWarning,
			What:   fmt.Sprintf("%s: the change journal holds revision %d of %d bytes, the history revision %d of %d (repaired or edited by hand): a full listing shows the journal's", id, e.rev, e.size, cur.rev(), cur.end),
			Repair: "ckpt repair"}, true
	}
	return ckpt.Problem{}, false
}

// pendingProblems reports marker files of dead processes holding markers.
func (s *Store) pendingProblems() []ckpt.Problem {
	j := s.journal()
	names, _ := readDirNames(j.pending())
	var out []ckpt.Problem
	for _, name := range names {
		if strings.HasPrefix(name, ".") || name == s.procMarkerName() {
			continue
		}
		ms, dead := deadMarkers(j.pending() + sep + name)
		if !dead {
			continue
		}
		for _, m := range ms {
			out = append(out, ckpt.Problem{ID: m.ID, Severity: ckpt.SeverityWarning,
				What:   fmt.Sprintf("%s: a writer died between its history and the journal (revision %d); the next write, watch or listing journals it", m.ID, m.Rev),
				Repair: "ckpt repair"})
		}
	}
	return out
}
