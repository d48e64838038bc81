package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// problemKind says which repair a finding needs.
type problemKind int

const (
	kindBadName   problemKind = iota // a directory that maps to no ID
	kindTrash                        // an interrupted Delete's leftovers in tmp/
	kindTemp                         // a leftover temporary file
	kindLost                         // damage in the middle, or acknowledged events cut off
	kindTorn                         // a torn last line no one acknowledged
	kindState                        // state.json missing, garbage or not the fold
	kindBackup                       // a backup garbage or not the fold at its revision
	kindBackupGap                    // expected backups missing
	kindLink                         // a symbolic link where the store keeps a file
	kindMark                         // marked damaged, though the history verifies
)

type finding struct {
	kind problemKind
	ckpt.Problem
	path string // for kindLink: the link
}

// diagnosis is everything Check knows about one checkpoint.
type diagnosis struct {
	f       files
	data    []byte // history.jsonl
	scan    scanResult
	folded  *ckpt.Checkpoint // fold of the good prefix; nil if none
	envAt   map[int64][]byte // envelopes of the fold at the revisions backups need
	newest  *ckpt.Checkpoint // the newest valid state among state.json and backups
	newestE envelope         // its envelope
	newestN string           // which file newest came from
	claimed int64            // the most history bytes a valid state or backup records
	found   []finding
}

// Check verifies the checkpoints ids (every checkpoint, and the store's own
// directories, when ids is empty) against the MUSTs and SHOULDs of
// docs/design.md. It is read-only: it changes and creates no file; it holds
// each checkpoint's lock shared while reading it, so it waits for an update
// in progress and delays writers of that checkpoint only meanwhile. An
// invalid ID fails with ckpt.ErrInvalid and a missing one with
// ckpt.ErrNotFound; damage is reported in the Report, not as an error.
func (s *Store) Check(ctx context.Context, ids []string) (*ckpt.Report, error) {
	return s.examine(ctx, ids, false)
}

// Repair fixes what Check finds in ids (every checkpoint when empty), each
// under its checkpoint's lock: it cuts a torn tail, moves a damaged history
// remainder aside into history.jsonl.damaged-… (and appends a restored event
// carrying the newest valid state when that is newer than what is left),
// rebuilds state.json, rewrites backups and removes leftover temporary
// files. The report lists each problem with Fixed set when it was fixed. A
// write that fails (a full disk) stops it with that error, returned with
// the report so far; nothing is cut from a history before what is cut is
// saved.
func (s *Store) Repair(ctx context.Context, ids []string) (*ckpt.Report, error) {
	return s.examine(ctx, ids, true)
}

// examine is Check (repair false) and Repair (repair true): the store's own
// directories first, then each checkpoint in ID order, then, for the whole
// store, the change journal. A ctx done between checkpoints ends it with
// ctx.Err() and no report.
func (s *Store) examine(ctx context.Context, ids []string, repair bool) (*ckpt.Report, error) {
	r := &ckpt.Report{}
	if !s.examineOwnDirs(r, repair) {
		return r, nil // nothing under a linked directory is looked at
	}
	names, err := s.namesToExamine(r, ids, repair)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	for _, id := range slices.Compact(names) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.examineOne(r, s.files(id), repair); err != nil {
			return r, err
		}
	}
	if len(ids) == 0 {
		r.Problems = append(r.Problems, s.examineJournal(repair)...) // journal_check.go (H1)
	}
	return r, nil
}

// examineOwnDirs reports in r the store's own directories that are
// symbolic links (with repair, each is moved aside and replaced by an empty
// directory) and a quarantine directory that is not a real one. It returns
// false when a linked directory stays (not repairing, or the repair
// failed): nothing under it may be examined.
func (s *Store) examineOwnDirs(r *ckpt.Report, repair bool) bool {
	for _, name := range ownDirs {
		if fi, err := os.Lstat(filepath.Join(s.dir, name)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		p := s.linkProblem("", name, "ckpt repair")
		if repair {
			p.Fixed = s.replaceLinkedDir(filepath.Join(s.dir, name), &p) == nil
		}
		r.Problems = append(r.Problems, p)
		if !p.Fixed {
			return false
		}
	}
	if repair && s.linked != nil {
		s.linked = nil // every link was moved aside
	}
	if err := realDir(filepath.Join(s.dir, quarantineDir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.Problems = append(r.Problems, ckpt.Problem{Severity: ckpt.SeverityError,
			What:   fmt.Sprintf("%s: %v", quarantineDir, reason(err)),
			Repair: "remove " + filepath.Join(s.dir, quarantineDir) + " by hand (repair moves links there)"})
	}
	return true
}

// namesToExamine returns the IDs to examine: ids, each validated and
// present (an invalid ID fails with ckpt.ErrInvalid, a missing one with
// ckpt.ErrNotFound), or when ids is empty every checkpoint directory. For
// the whole store it also reports in r (and with repair fixes) linked or
// misnamed entries of checkpoints/, an interrupted Delete's trash and links
// among the journal's files.
func (s *Store) namesToExamine(r *ckpt.Report, ids []string, repair bool) ([]string, error) {
	if len(ids) > 0 {
		for _, id := range ids {
			if err := ckpt.ValidateID(id); err != nil {
				return nil, err
			}
			err := realDir(s.files(id).dir)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, notFound(id)
			}
			if err != nil && !isLinkError(err) {
				return nil, err
			}
		}
		return ids, nil
	}
	des, err := os.ReadDir(filepath.Join(s.dir, checkpointsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("filestore: listing checkpoints: %w", err)
	}
	var names []string
	for _, de := range des {
		if isSymlink(de) {
			r.Problems = append(r.Problems, s.linkCheckpointDir(de.Name(), repair))
			continue
		}
		if !de.IsDir() {
			continue
		}
		if id, ok := idFromDirName(de.Name()); ok {
			names = append(names, id)
			continue
		}
		r.Problems = append(r.Problems, ckpt.Problem{ID: de.Name(), Severity: ckpt.SeverityError,
			What:   fmt.Sprintf("%s is not a checkpoint directory: its name maps to no valid checkpoint ID", filepath.Join(checkpointsDir, de.Name())),
			Repair: fmt.Sprintf("move %s out of %s by hand", de.Name(), filepath.Join(s.dir, checkpointsDir))})
	}
	r.Problems = append(r.Problems, s.checkTrash(repair)...)
	r.Problems = append(r.Problems, s.checkJournalLinks(repair)...)
	return names, nil
}

// examineOne checks (with repair, repairs) checkpoint f and adds its
// problems to r, counting it in r.Checked when it holds a checkpoint. A
// checkpoint directory that is a symbolic link is reported (and with repair
// moved aside), never read. An error (a failed write while repairing)
// comes with the problems found so far already added to r.
func (s *Store) examineOne(r *ckpt.Report, f files, repair bool) error {
	if fi, err := os.Lstat(f.dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		r.Problems = append(r.Problems, s.linkCheckpointDir(filepath.Base(f.dir), repair))
		return nil
	}
	var found []finding
	var ok bool
	var err error
	if repair {
		found, ok, err = s.repairOne(f)
	} else {
		found, ok, err = s.checkOne(f)
	}
	if err == nil && ok {
		r.Checked++
	}
	for _, p := range found {
		r.Problems = append(r.Problems, p.Problem)
	}
	return err
}

// checkJournalLinks reports (and with repair quarantines) symbolic links
// among the change journal's files. The journal never opens them (it opens
// with O_NOFOLLOW), so they only stop it; moved aside, it starts its files
// again.
func (s *Store) checkJournalLinks(repair bool) []ckpt.Problem {
	var out []ckpt.Problem
	for _, dir := range []string{journalDir, journalDir + sep + pendingDir} {
		if realDir(filepath.Join(s.dir, dir)) != nil {
			continue // missing, or a link reported above
		}
		des, _ := os.ReadDir(filepath.Join(s.dir, dir))
		for _, de := range des {
			if !isSymlink(de) {
				continue
			}
			p := s.linkProblem("", filepath.Join(dir, de.Name()), "ckpt repair")
			if repair {
				dst, err := s.quarantine(filepath.Join(s.dir, dir, de.Name()))
				p.Fixed = err == nil
				p.What += movedAside(dst, err)
			}
			out = append(out, p)
		}
	}
	return out
}

// linkCheckpointDir reports (and with repair quarantines) a symbolic link
// named name in checkpoints/.
func (s *Store) linkCheckpointDir(name string, repair bool) ckpt.Problem {
	id, _ := idFromDirName(name)
	p := s.linkProblem(id, filepath.Join(checkpointsDir, name), "ckpt repair")
	if repair {
		dst, err := s.quarantine(filepath.Join(s.dir, checkpointsDir, name))
		p.Fixed = err == nil
		p.What += movedAside(dst, err)
	}
	return p
}

// replaceLinkedDir moves the link at path into quarantine and makes an
// empty directory in its place, noting what it did in p.
func (s *Store) replaceLinkedDir(path string, p *ckpt.Problem) error {
	dst, err := s.quarantine(path)
	if err == nil {
		err = os.Mkdir(path, 0o755)
	}
	p.What += movedAside(dst, err)
	return err
}

// movedAside describes the outcome of quarantine for a report.
func movedAside(dst string, err error) string {
	if err != nil {
		return fmt.Sprintf("; could not move it aside: %v", err)
	}
	return "; moved the link to " + filepath.Join(quarantineDir, filepath.Base(dst))
}

// isLinkError reports whether err is a linkError.
func isLinkError(err error) bool {
	return errors.Is(err, ckpt.ErrCorrupt) && strings.Contains(err.Error(), "is a symbolic link")
}

// checkOne diagnoses checkpoint f under a shared lock on its directory, so
// that a writer's update in progress is not reported as damage and a
// Delete (prune) waits; a checkpoint deleted since the listing is skipped.
// Check creates nothing, not even a lock file.
func (s *Store) checkOne(f files) ([]finding, bool, error) {
	release, gone, err := lockShared(f.dir)
	if err != nil {
		return nil, false, fmt.Errorf("filestore: checking %s: %w", f.id, err)
	}
	if gone {
		return nil, false, nil // deleted (pruned) since the listing
	}
	defer release()
	d, err := s.diagnose(f)
	if err != nil {
		return nil, false, err
	}
	return d.found, d.exists(), nil
}

// exists reports whether the directory holds a checkpoint at all (a refused
// create may leave only a lock file).
func (d *diagnosis) exists() bool {
	return len(d.data) > 0 || d.claimed > 0 || len(d.found) > 0
}

// lost reports whether acknowledged history is damaged or missing.
func (d *diagnosis) lost() bool {
	return slices.ContainsFunc(d.found, func(f finding) bool { return f.kind == kindLost })
}

func (d *diagnosis) add(kind problemKind, sev ckpt.Severity, repair, format string, args ...any) {
	d.found = append(d.found, finding{kind: kind, Problem: ckpt.Problem{ID: d.f.id, Severity: sev, What: fmt.Sprintf(format, args...), Repair: repair}})
}

// backupFile is one backup as diagnose read it: its revision, and its
// envelope and state, or the error that made it unusable.
type backupFile struct {
	rev int64
	env envelope
	st  *ckpt.Checkpoint
	err error
}

// diagnose reads checkpoint f and lists its problems. It writes nothing.
func (s *Store) diagnose(f files) (*diagnosis, error) {
	d := &diagnosis{f: f, envAt: map[int64][]byte{}}
	repairCmd := "ckpt repair " + f.id
	if err := s.findStrayFiles(d, repairCmd); err != nil {
		return nil, err
	}
	// Links were reported above; their targets are never read.
	var err error
	d.data, err = readNoFollow(f.history())
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !isLinkError(err) {
		return nil, fmt.Errorf("filestore: checking %s: %w", f.id, err)
	}

	// The states that claim a history: state.json and each backup.
	stateData, stateErr := readNoFollow(f.state())
	stateEnv, stateSt, stateParseErr := envelope{}, (*ckpt.Checkpoint)(nil), stateErr
	if stateErr == nil {
		stateEnv, stateSt, stateParseErr = parseEnvelope(stateData, f.id)
	}
	d.consider(stateEnv, stateSt, stateParseErr, stateName)
	backupRevs, backupsErr := listBackups(f)
	var backups []backupFile
	for _, rev := range backupRevs {
		env, st, err := readBackup(f, rev)
		backups = append(backups, backupFile{rev, env, st, err})
		d.consider(env, st, err, filepath.Join(backupsDir, backupName(rev)))
	}

	last, expected := s.foldHistory(d, backups)
	d.checkHistory(last, repairCmd)
	if !d.exists() || d.folded == nil || d.lost() {
		return d, nil // repair rebuilds the caches after mending the history
	}

	// SHOULDs: the caches.
	switch {
	case errors.Is(stateErr, fs.ErrNotExist):
		d.add(kindState, ckpt.SeverityWarning, repairCmd, "state.json is missing; reads replay the history")
	case stateParseErr != nil:
		d.add(kindState, ckpt.SeverityWarning, repairCmd, "state.json is damaged (%v); reads use backups and the history", stateParseErr)
	case stateEnv.Rev != last || stateEnv.Sum != d.scan.chain.Sum || stateEnv.HistorySize != d.scan.end:
		d.add(kindState, ckpt.SeverityWarning, repairCmd, "state.json is at revision %d, the history at %d; reads replay the difference", stateEnv.Rev, last)
	case !sameState(stateSt, d.folded):
		d.add(kindState, ckpt.SeverityWarning, repairCmd, "state.json differs from the fold of the history")
	}
	d.checkBackups(backups, backupsErr, expected, last, repairCmd)
	return d, nil
}

// findStrayFiles notes in d the symbolic links and leftover temporary files
// in the checkpoint's directory and its backups directory (a backups
// directory that is not a real one is not listed). It reads directories
// only; the error is a failure to list the checkpoint's directory.
func (s *Store) findStrayFiles(d *diagnosis, repairCmd string) error {
	f := d.f
	des, err := os.ReadDir(f.dir)
	if err != nil {
		return fmt.Errorf("filestore: checking %s: %w", f.id, err)
	}
	var bdes []os.DirEntry
	if realDir(f.backups()) == nil {
		bdes, _ = os.ReadDir(f.backups())
	}
	for _, list := range []struct {
		dir string
		des []os.DirEntry
	}{{"", des}, {backupsDir, bdes}} {
		for _, de := range list.des {
			name := filepath.Join(list.dir, de.Name())
			switch {
			case isSymlink(de):
				p := s.linkProblem(f.id, filepath.Join(checkpointsDir, filepath.Base(f.dir), name), repairCmd)
				d.found = append(d.found, finding{kind: kindLink, Problem: p, path: filepath.Join(f.dir, name)})
			case isTemp(de.Name()) && !heldByWriter(filepath.Join(f.dir, name)):
				d.add(kindTemp, ckpt.SeverityWarning, repairCmd, "leftover temporary file %s from an interrupted write", name)
			}
		}
	}
	return nil
}

// foldHistory scans d.data, folding its good prefix into d.folded and
// recording the scan in d.scan, then folds that prefix again to record in
// d.envAt the envelope of the fold at each revision a backup exists for
// (backups) or should exist for. It returns the last good revision and the
// revisions backups should exist at, oldest first.
func (s *Store) foldHistory(d *diagnosis, backups []backupFile) (last int64, expected []int64) {
	want := map[int64]bool{}
	for _, b := range backups {
		want[b.rev] = true
	}
	every := int64(s.cfg.BackupEvery)
	d.scan = scanHistory(d.data, 0, ckpt.Chain{}, func(e ckpt.Event, _ int64) (err error) {
		if d.folded, err = ckpt.Apply(d.f.id, d.folded, e); err != nil {
			return err
		}
		last = e.Seq
		return nil
	})
	// A second pass over the good prefix records the fold at the revisions
	// backups exist for or should exist for (known only now).
	expected = expectedBackups(last, every, int64(s.cfg.BackupKeep))
	for _, rev := range expected {
		want[rev] = true
	}
	if len(want) > 0 && d.scan.end > 0 {
		var st *ckpt.Checkpoint
		scanHistory(d.data[:d.scan.end], 0, ckpt.Chain{}, func(e ckpt.Event, end int64) (err error) {
			if st, err = ckpt.Apply(d.f.id, st, e); err == nil && want[e.Seq] {
				d.envAt[e.Seq], err = encodeEnvelope(st, e.Sum, end)
			}
			return err
		})
	}
	return last, expected
}

// checkHistory notes the MUST problems of the history in d (damage, lost
// acknowledged events, a torn last line) and a damaged mark on a history
// that verifies. It assumes foldHistory has run; last is the last good
// revision.
func (d *diagnosis) checkHistory(last int64, repairCmd string) {
	switch {
	case d.scan.bad != nil:
		d.add(kindLost, ckpt.SeverityError, repairCmd+" (keeps the events before the damage and saves the rest aside)",
			"%s; %d good events before it, %d bytes from there on", d.scan.bad, last, int64(len(d.data))-d.scan.bad.offset)
	case d.claimed > d.scan.end:
		d.add(kindLost, ckpt.SeverityError, repairCmd+" (keeps the good events and restores the newest saved state)",
			"history.jsonl has %d good bytes (%d events) but a state file or backup records %d: acknowledged events were cut off or damaged",
			d.scan.end, last, d.claimed)
	case d.scan.torn > 0:
		d.add(kindTorn, ckpt.SeverityWarning, repairCmd+", or the next update, cuts it",
			"history.jsonl ends in a torn line (%d bytes) from an interrupted write; it was never acknowledged", d.scan.torn)
	}
	if why, marked := markedDamaged(d.f); marked && !d.lost() && d.exists() {
		d.add(kindMark, ckpt.SeverityWarning, repairCmd+" (removes the mark)",
			"the checkpoint is marked damaged (%s), which refuses writes, but its history verifies now", why)
	}
}

// checkBackups notes in d each backup that is damaged, past the history's
// last revision last, or not the fold at its revision, and the expected
// backups that are missing (backupsErr is listBackups' error: a missing
// directory is named as such). It assumes the history verified and
// d.envAt holds the fold at each backup's revision.
func (d *diagnosis) checkBackups(backups []backupFile, backupsErr error, expected []int64, last int64, repairCmd string) {
	for _, b := range backups {
		name := filepath.Join(backupsDir, backupName(b.rev))
		switch {
		case b.err != nil:
			d.add(kindBackup, ckpt.SeverityWarning, repairCmd, "backup %s is damaged (%v)", name, b.err)
		case b.rev > last || b.env.Sum == "":
			d.add(kindBackup, ckpt.SeverityWarning, repairCmd, "backup %s is past the history's last revision %d", name, last)
		default:
			env, st, err := parseEnvelope(d.envAt[b.rev], d.f.id)
			if err != nil || !sameState(st, b.st) || env.Sum != b.env.Sum || env.HistorySize != b.env.HistorySize {
				d.add(kindBackup, ckpt.SeverityWarning, repairCmd, "backup %s does not match the history at revision %d", name, b.rev)
			}
		}
	}
	var missing []string
	for _, rev := range expected {
		if !slices.ContainsFunc(backups, func(b backupFile) bool { return b.rev == rev }) {
			missing = append(missing, fmt.Sprint(rev))
		}
	}
	switch {
	case len(missing) > 0 && errors.Is(backupsErr, fs.ErrNotExist):
		d.add(kindBackupGap, ckpt.SeverityWarning, repairCmd, "the backups directory is missing (want backups at revisions %s)", strings.Join(missing, ", "))
	case len(missing) > 0:
		d.add(kindBackupGap, ckpt.SeverityWarning, repairCmd, "backups at revisions %s are missing", strings.Join(missing, ", "))
	}
}

// consider notes a state envelope from state.json or a backup: how much
// history it claims and whether it is the newest valid state seen.
func (d *diagnosis) consider(env envelope, st *ckpt.Checkpoint, err error, name string) {
	if err != nil || st == nil {
		return
	}
	d.claimed = max(d.claimed, env.HistorySize)
	if d.newest == nil || st.Rev > d.newest.Rev {
		d.newest, d.newestE, d.newestN = st, env, name
	}
}

// expectedBackups lists the revisions at which backups should exist for a
// history of last revisions: the newest keep multiples of every.
func expectedBackups(last, every, keep int64) []int64 {
	var revs []int64
	for rev := last / every * every; rev > 0 && int64(len(revs)) < keep; rev -= every {
		revs = append(revs, rev)
	}
	slices.Reverse(revs)
	return revs
}

// sameState compares two states as stored: by their JSON, without the beat,
// and with their notes bounded (ckpt.BoundNotes): a state written before
// ckpt bounded the notes is the fold of its history once they are (the
// next append rewrites it bounded).
func sameState(a, b *ckpt.Checkpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Heartbeat.LastBeat, y.Heartbeat.LastBeat = time.Time{}, time.Time{}
	x.Heartbeat.Presence, y.Heartbeat.Presence = nil, nil
	x.Context.Notes, y.Context.Notes = ckpt.BoundNotes(x.Context.Notes), ckpt.BoundNotes(y.Context.Notes)
	jx, err1 := json.Marshal(&x)
	jy, err2 := json.Marshal(&y)
	return err1 == nil && err2 == nil && bytes.Equal(jx, jy)
}

// isTemp reports whether name is a temporary file of atomicfile.
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

// checkTrash reports (and with repair removes) what an interrupted Delete
// left in tmp/. Deletes in progress hold tmp/ locked (shared); then there
// is nothing to report, as their trash is not left over. A tmp/ that is a symbolic link is reported, and repair
// moves the link aside: nothing is ever listed or removed through it.
func (s *Store) checkTrash(repair bool) []ckpt.Problem {
	tmp := filepath.Join(s.dir, tmpDir)
	if fi, err := os.Lstat(tmp); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		p := s.linkProblem("", tmpDir, "ckpt repair")
		if repair {
			p.Fixed = s.replaceLinkedDir(tmp, &p) == nil
		}
		return []ckpt.Problem{p}
	}
	release, busy, err := tryLockDir(tmp, true)
	if busy || err != nil {
		return nil // a delete in progress (or no tmp/): its trash is not left over
	}
	defer release()
	des, _ := os.ReadDir(tmp)
	var out []ckpt.Problem
	for _, de := range des {
		path := filepath.Join(tmp, de.Name())
		p := ckpt.Problem{Severity: ckpt.SeverityWarning, Repair: "ckpt repair",
			What: fmt.Sprintf("%s is left over from an interrupted delete", filepath.Join(tmpDir, de.Name()))}
		if repair {
			p.Fixed = os.RemoveAll(path) == nil
		}
		out = append(out, p)
	}
	return out
}
