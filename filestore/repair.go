package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// repairPoint, when set (by the repair torture test only), runs after
// each durable step of a repair, named: the test kills the repairing
// process there.
var repairPoint func(step string)

func reached(step string) {
	if repairPoint != nil {
		repairPoint(step)
	}
}

// repairActor is the actor of the events repair appends.
var repairActor = ckpt.Actor{Agent: "ckpt-repair"}

// repairOne repairs checkpoint f under its lock and returns what it found,
// with Fixed set on what it fixed, plus anything still wrong afterwards.
func (s *Store) repairOne(f files) ([]finding, bool, error) {
	found := s.moveLinkedLock(f)
	unlock, err := s.lockCheckpoint(context.Background(), f, false)
	if err != nil {
		if errors.Is(err, ckpt.ErrNotFound) {
			return found, false, nil // deleted (pruned) since the listing
		}
		return nil, false, err
	}
	defer unlock()
	s.forget(f.id)
	d, err := s.diagnose(f)
	if err != nil {
		return nil, false, err
	}
	if !d.exists() {
		return nil, false, nil
	}
	// Links first: once they are moved aside, every file repair reads or
	// writes is the store's own.
	if slices.ContainsFunc(d.found, func(p finding) bool { return p.kind == kindLink }) {
		found = s.moveLinksAside(d, found)
		if d, err = s.diagnose(f); err != nil {
			return nil, false, err
		}
	}
	found = append(found, d.found...)
	failed := repairFailure{id: f.id}
	s.mendFindings(f, d, found, &failed)
	// The caches follow the (possibly mended) history.
	if err := s.repairCaches(f, found, &failed); err != nil {
		return nil, false, err
	}
	final, err := s.diagnose(f)
	if err != nil {
		return nil, false, err
	}
	for _, p := range final.found {
		p.What = "after repair: " + p.What
		found = append(found, p)
	}
	if failed.err != nil {
		return found, true, failed.err
	}
	return found, true, nil
}

// repairFailure keeps the first write of a repair that failed (a full disk,
// a read-only file system): Repair returns it, after what it could do.
type repairFailure struct {
	id  string // the checkpoint being repaired
	err error
}

// note records err, failing to do what, unless a failure is already
// recorded or err is nil or errNothingRecoverable (a finding left unfixed,
// not a failed write).
func (r *repairFailure) note(what string, err error) {
	if err != nil && r.err == nil && !errors.Is(err, errNothingRecoverable) {
		r.err = fmt.Errorf("filestore: repairing %s: %s: %w", r.id, what, err)
	}
}

// moveLinkedLock moves a lock file of f that is a symbolic link into
// quarantine, before repair takes the lock: a linked lock file refuses
// every writer, this one too. It returns the finding (Fixed when moved), or
// nil when the lock file is not a link.
func (s *Store) moveLinkedLock(f files) []finding {
	if fi, err := os.Lstat(f.lock()); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	// A rename touches only the link.
	p := finding{kind: kindLink, Problem: s.linkProblem(f.id, filepath.Join(checkpointsDir, filepath.Base(f.dir), lockName), "ckpt repair "+f.id)}
	dst, err := s.quarantine(f.lock())
	p.Fixed = err == nil
	p.What += movedAside(dst, err)
	return []finding{p}
}

// moveLinksAside moves each symbolic link d found into quarantine and
// returns found with those findings appended, Fixed set on each link
// moved. It assumes the checkpoint's lock is held; d is stale afterwards.
func (s *Store) moveLinksAside(d *diagnosis, found []finding) []finding {
	for _, p := range d.found {
		if p.kind == kindLink {
			dst, err := s.quarantine(p.path)
			p.Fixed = err == nil
			p.What += movedAside(dst, err)
			found = append(found, p)
		}
	}
	return found
}

// mendFindings fixes, in place in found, the findings about f's files that
// d (its diagnosis, after links were moved aside) reports: leftover
// temporary files, a damaged or cut history and a torn last line. It sets
// Fixed on each one fixed and notes the first failed write in failed. It
// assumes the checkpoint's lock is held.
func (s *Store) mendFindings(f files, d *diagnosis, found []finding, failed *repairFailure) {
	for i := range found {
		p := &found[i]
		switch p.kind {
		case kindTemp:
			err := removeTemps(f)
			p.Fixed = err == nil
			failed.note("removing temporary files", err)
		case kindLost:
			what, err := s.mendHistory(f, d)
			p.What += "; " + what
			p.Fixed = err == nil
			failed.note(what, err)
		case kindTorn:
			saved, err := saveAndCutTorn(f, d.scan.end, d.scan.chain.Seq+1, s.clock())
			p.Fixed = err == nil
			if p.Fixed {
				p.What += "; saved it in " + saved + " and cut it"
			}
			failed.note("cutting the torn tail", err)
		}
	}
}

// repairCaches diagnoses f's (possibly mended) history again and, if it is
// sound, removes the damaged mark and rebuilds state.json and the backups,
// setting Fixed on the findings in found that this fixes; a failed rebuild
// is noted in failed. The error is a failure to diagnose. It assumes the
// checkpoint's lock is held.
func (s *Store) repairCaches(f files, found []finding, failed *repairFailure) error {
	after, err := s.diagnose(f)
	if err != nil {
		return err
	}
	if !after.lost() {
		// The history is sound again: writers may append to it.
		err := os.Remove(f.mark())
		reached("unmarked")
		for i := range found {
			if found[i].kind == kindMark {
				found[i].Fixed = err == nil
			}
		}
	}
	if after.folded != nil && !after.lost() {
		rebuilt := s.rebuildCaches(f, after)
		reached("rebuilt")
		failed.note("rebuilding state.json and backups", rebuilt)
		for i := range found {
			switch found[i].kind {
			case kindState, kindBackup, kindBackupGap:
				found[i].Fixed = rebuilt == nil
			}
		}
	}
	return nil
}

// errNothingRecoverable says mendHistory found nothing to keep: a finding
// left unfixed, not a failed write.
var errNothingRecoverable = errors.New("nothing recoverable")

// mendHistory handles damage in the middle of a history, or a history
// shorter than its saved states: it saves everything after the good prefix
// aside, cuts the history to the prefix and, if a saved state is newer than
// the prefix, appends an event carrying it. It returns what it did.
func (s *Store) mendHistory(f files, d *diagnosis) (string, error) {
	prefixRev, prefixSum, prefixEnd := d.scan.chain.Seq, d.scan.chain.Sum, d.scan.end
	var did []string
	rest := d.data[prefixEnd:]
	saved := ""
	if len(rest) > 0 {
		saved = uniquePath(filepath.Join(f.dir, fmt.Sprintf("%s%d-%d", damagedPrefix, s.clock().Unix(), prefixRev+1)))
		if err := atomicfile.WriteFile(saved, rest, 0o644); err != nil {
			return "could not save the damaged remainder, changed nothing", err
		}
		did = append(did, fmt.Sprintf("saved %d bytes from event %d on to %s", len(rest), prefixRev+1, filepath.Base(saved)))
		reached("saved")
		// Their keys stay known, so a retried keyed write is not applied
		// twice; durably, before the history is cut.
		if err := rememberMovedKeys(f, rest, filepath.Base(saved)); err != nil {
			return strings.Join(did, "; ") + "; could not remember their keys, cut nothing", err
		}
		if err := atomicfile.SyncDir(f.dir); err != nil {
			return strings.Join(did, "; ") + "; cut nothing", err
		}
		reached("keys")
	}
	if _, err := fileSize(f.history()); err == nil {
		if err := cutTail(f, prefixEnd); err != nil {
			return "could not cut the history", err
		}
		reached("cut")
	}
	did = append(did, fmt.Sprintf("kept events 1-%d", prefixRev))

	best, bestEnv, from := d.newest, d.newestE, d.newestN
	if best == nil || best.Rev <= prefixRev {
		if prefixRev == 0 {
			return fmt.Sprintf("%s; no valid event or saved state is left: the checkpoint is empty until restored by hand from %s", strings.Join(did, "; "), filepath.Base(saved)),
				errNothingRecoverable
		}
		return strings.Join(did, "; "), dropCaches(f)
	}
	// Events in the remainder that continue the saved state are applied to
	// it, so that the restored state is the newest the files can tell.
	st, continued := continueState(f, best, ckpt.Chain{Seq: bestEnv.Rev, Sum: bestEnv.Sum}, rest)
	if continued {
		from += " and the saved remainder"
	}
	kind := ckpt.EventRestored
	if prefixRev == 0 {
		kind = ckpt.EventImported
	}
	st.Heartbeat.LastBeat, st.Heartbeat.Presence = time.Time{}, nil
	ev, err := ckpt.NewEvent(kind, s.clock(), repairActor, ckpt.Snapshot{State: *st, Rev: st.Rev, Source: "ckpt repair: " + from})
	if err != nil {
		return strings.Join(did, "; "), err
	}
	line, stored, err := seal(ev, prefixRev, prefixSum, s.clock())
	if err != nil {
		return strings.Join(did, "; "), err
	}
	if _, err := ckpt.Apply(f.id, d.folded, stored); err != nil {
		return strings.Join(did, "; ") + "; the saved state does not apply", err
	}
	if err := appendLine(f, -1, line, prefixEnd == 0, nil); err != nil {
		return strings.Join(did, "; "), err
	}
	reached("appended")
	did = append(did, fmt.Sprintf("appended %s event %d with the state of revision %d from %s", kind, stored.Seq, st.Rev, from))
	return strings.Join(did, "; "), dropCaches(f)
}

// continueState applies to state st, at chain, the events of the
// remainder rest and of the remainders earlier repairs saved aside that
// continue it, in order, and reports whether any did. A remainder saved by
// a repair killed after it cut the history counts: its events are in no
// other file. Only events whose checksums continue st's chain apply, so an
// unrelated older remainder changes nothing.
func continueState(f files, st *ckpt.Checkpoint, chain ckpt.Chain, rest []byte) (*ckpt.Checkpoint, bool) {
	bySeq := map[int64][]ckpt.Event{}
	for _, src := range append(savedRemainders(f), rest) {
		for _, line := range bytes.SplitAfter(src, []byte{'\n'}) {
			if e, err := ckpt.DecodeLine(line); err == nil {
				bySeq[e.Seq] = append(bySeq[e.Seq], e)
			}
		}
	}
	continued := false
	for applied := true; applied; {
		applied = false
		for _, e := range bySeq[chain.Seq+1] {
			c := chain
			if c.Next(e) != nil {
				continue
			}
			if next, err := ckpt.Apply(f.id, st.Clone(), e); err == nil {
				st, chain, applied, continued = next, c, true, true
				break
			}
		}
	}
	return st, continued
}

// savedRemainders returns the contents of the remainders earlier repairs
// of f saved aside (history.damaged-*), unreadable ones left out.
func savedRemainders(f files) [][]byte {
	names, _ := filepath.Glob(filepath.Join(f.dir, damagedPrefix+"*"))
	var out [][]byte
	for _, n := range names {
		if b, err := readNoFollow(n); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// dropCaches removes state.json and every backup: after the history was
// mended they describe the old history (whose remainder is saved aside) and
// are rebuilt from the new one.
func dropCaches(f files) error {
	if err := os.Remove(f.state()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	revs, _ := listBackups(f)
	for _, rev := range revs {
		if err := os.Remove(filepath.Join(f.backups(), backupName(rev))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// rebuildCaches rewrites state.json and the backups from the fold in d.
func (s *Store) rebuildCaches(f files, d *diagnosis) error {
	env, err := encodeEnvelope(d.folded, d.scan.chain.Sum, d.scan.end)
	if err != nil {
		return err
	}
	if err := atomicfile.ReplaceCache(f.state(), env, 0o644); err != nil {
		return err
	}
	revs, _ := listBackups(f)
	for _, rev := range revs {
		if want, ok := d.envAt[rev]; ok {
			if got, err := readNoFollow(filepath.Join(f.backups(), backupName(rev))); err == nil && bytes.Equal(got, want) {
				continue
			}
		}
		if err := os.Remove(filepath.Join(f.backups(), backupName(rev))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, rev := range expectedBackups(d.scan.chain.Seq, int64(s.cfg.BackupEvery), int64(s.cfg.BackupKeep)) {
		if got, err := readNoFollow(filepath.Join(f.backups(), backupName(rev))); err == nil && bytes.Equal(got, d.envAt[rev]) {
			continue
		}
		if err := s.writeBackup(f, rev, d.envAt[rev]); err != nil {
			return err
		}
	}
	return nil
}

// removeTemps removes the leftover temporary files in f's directory and
// its backups, not one a live writer holds locked (a first Beat's, which
// takes no checkpoint lock). Call it only under the checkpoint's lock.
func removeTemps(f files) error {
	var first error
	for _, dir := range []string{f.dir, f.backups()} {
		if realDir(dir) != nil {
			continue
		}
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			if path := filepath.Join(dir, de.Name()); isTemp(de.Name()) && !heldByWriter(path) {
				if err := os.Remove(path); err != nil && first == nil {
					first = err
				}
			}
		}
	}
	return first
}

// uniquePath returns p, or p with a numeric suffix if p exists.
func uniquePath(p string) string {
	cand := p
	for i := 1; ; i++ {
		if _, err := os.Lstat(cand); errors.Is(err, fs.ErrNotExist) {
			return cand
		}
		cand = fmt.Sprintf("%s.%d", p, i)
	}
}
