package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

func notFound(id string) error {
	return fmt.Errorf("%w: %s", ckpt.ErrNotFound, id)
}

// Append implements ckpt.Store, in the write order of docs/design.md. It
// checks, in order: the ID, a repeated key among the last ckpt.KeyWindow
// events (replayed whatever the event and opts), opts.IfRev, then Apply. The
// event is durable (fdatasync'd) when Append returns without error. A failure
// after that point (the state cache or a backup) is reported in
// AppendResult.Warnings, not as an error, because the update happened. While
// it waits for the checkpoint's lock it watches ctx: a done ctx ends the wait
// with ctx.Err() and nothing appended.
func (s *Store) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if err := s.begin(ctx, id); err != nil {
		return ckpt.AppendResult{}, err
	}
	if opts.IfRev < 0 {
		return ckpt.AppendResult{}, fmt.Errorf("%w: if-rev %d is negative: give the revision you read, or 0 for none", ckpt.ErrInvalid, opts.IfRev)
	}
	f := s.files(id)
	creating := e.Type == ckpt.EventCreated || e.Type == ckpt.EventImported
	held, err := s.lockHeld(ctx, f, creating)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	var cur current
	kept := false // the history descriptor goes with the lock's, for the next append
	defer func() {
		if kept {
			held.unlockKeeping(cur.historyFD())
			return
		}
		cur.closeHistory()
		held.unlock()
	}()

	cur, warnings, err := s.loadForAppend(f, held.dirFD, held.histFD)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if e.Key != "" && cur.state != nil {
		if cur.remembered && cur.keys == nil {
			cur.keys = readKeyWindow(f.history(), cur.end) // this Store's second keyed append
		}
		if res, ok, err := s.replay(f, cur, e.Key); err != nil || ok {
			res.Warnings = append(warnings, res.Warnings...)
			return res, err
		}
	}
	if err := checkRev(id, cur.state, opts.IfRev); err != nil {
		return ckpt.AppendResult{}, err
	}
	e = opts.Attribute(cur.state, e)
	line, stored, next, err := s.sealAndApply(f, cur, e)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	var post afterSync
	end := cur.end + int64(len(line))
	during := func() { post.prepare(f, held.dirFD, stored, next, end) }
	warnings, err = s.writeEvent(f, held.lockFD, cur, line, stored, &post, during, warnings)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	warnings = s.writeCaches(f, held.dirFD, next.Rev, post.env, post.envErr, warnings)
	if cur.keys != nil {
		cur.keys.add(stored.Seq, stored.Key)
	}
	// post.out is a copy: once remembered, next belongs to the next update
	// of this checkpoint (in this process), which may change it.
	kept = s.remember(f, cur.ino, end, line, stored.Sum, next, cur.keys) && cur.hasFD
	return ckpt.AppendResult{State: post.out, Event: stored, Warnings: warnings}, nil
}

// loadForAppend reads the current state of f for an update (step 3 of the
// write order) and assumes f's locks are held; dfd is f's directory as
// they have it open (-1: none) and hfd the history descriptor kept with
// them (-1: none), which it owns from here on. It
// refuses a checkpoint marked damaged, takes the Store's memory of its own
// last write when the history is as it left it and loads the state
// otherwise (an ErrCorrupt marks the checkpoint damaged), then saves and
// cuts a torn last line. The warnings are nil unless a torn line was cut;
// on error nothing was changed but the damaged mark.
func (s *Store) loadForAppend(f files, dfd, hfd int) (current, []string, error) {
	if why, marked := markedDamagedIn(dfd, f); marked {
		closeFD(hfd)
		return current{}, nil, refuseDamaged(f.id, why)
	}
	cur, ok := s.takeWritten(f, dfd, hfd)
	if !ok {
		var err error
		if cur, err = s.load(f); err != nil {
			if errors.Is(err, ckpt.ErrCorrupt) {
				markDamaged(f, reason(err))
			}
			return current{}, nil, err
		}
	}
	var warnings []string
	if cur.torn > 0 {
		saved, err := saveAndCutTorn(f, cur.end, cur.rev()+1, s.clock())
		if err != nil {
			return current{}, nil, err
		}
		warnings = append(warnings, fmt.Sprintf("%s: cut a torn last history line (%d bytes, saved in %s) left by an interrupted write; it was never acknowledged", f.id, cur.torn, saved))
	}
	return cur, warnings, nil
}

// sealAndApply seals e after cur's last event and applies it to cur.state
// (step 6 of the write order). It returns the history line, the event as
// the line decodes, and the new state; it writes nothing, except that a
// refused create removes the lock file and directory it made.
func (s *Store) sealAndApply(f files, cur current, e ckpt.Event) ([]byte, ckpt.Event, *ckpt.Checkpoint, error) {
	line, stored, err := seal(e, cur.rev(), cur.sum, s.clock())
	if err != nil {
		return nil, ckpt.Event{}, nil, err
	}
	next, err := ckpt.Apply(f.id, cur.state, stored)
	if err != nil {
		if cur.state == nil && cur.end == 0 {
			// Leave no trace of a refused create: its lock file and
			// directory go (a waiter notices and starts again).
			os.Remove(f.lock())
			os.Remove(f.dir)
		}
		return nil, ckpt.Event{}, nil, err
	}
	return line, stored, next, nil
}

// writeEvent makes the sealed line durable and journals it (steps 7a, 7 and
// 7b of the write order): the pending marker, the history append with
// fdatasync (running during meanwhile, which fills post), then the journal
// line post holds and the blanked marker. It returns warnings with any
// journal failure appended. An error means the update was not
// acknowledged; the markers stay for whoever resolves them.
func (s *Store) writeEvent(f files, lockFD int, cur current, line []byte, stored ckpt.Event, post *afterSync, during func(), warnings []string) ([]string, error) {
	if cur.end == 0 {
		// A new checkpoint has no beat, whatever the liveness log holds
		// of an earlier one of its ID; its first beat comes after its
		// history, so after this line.
		if err := s.logLive(f.id, nil); err != nil {
			return warnings, fmt.Errorf("filestore: %s: journal/live: %w (nothing was written)", f.id, err)
		}
	}
	mark, err := s.markPending(f, lockFD, marker{Kind: ckpt.ChangeEvent, ID: f.id, Rev: stored.Seq, Sum: stored.Sum})
	if err != nil {
		return warnings, err
	}
	if err := appendLine(f, cur.historyFD(), line, cur.end == 0, during); err != nil {
		// The markers stay: whoever resolves them checks the history.
		mark.leave()
		return warnings, err
	}
	// The update is durable. What follows is the change feed and caches.
	if afterHistorySync != nil {
		afterHistorySync()
	}
	err = post.jerr
	if err == nil {
		err = s.journalLine(post.jline)
	}
	if err != nil {
		mark.leave()
		warnings = append(warnings, fmt.Sprintf("%s: the update is saved but the change journal did not record it (%v); the next writer of %s or a repair journals it", f.id, err, f.id))
	} else {
		mark.done()
	}
	return warnings, nil
}

// writeCaches overwrites state.json with env, the envelope of revision
// rev or envErr (step 8 of the write order, no fsync; through dfd, f's
// directory as the held lock has it open, or -1) and writes a backup when
// rev is a multiple of BackupEvery. The update is already durable, so
// failures are returned as warnings appended to warnings, never as errors.
func (s *Store) writeCaches(f files, dfd int, rev int64, env []byte, envErr error, warnings []string) []string {
	if envErr != nil {
		return append(warnings, envErr.Error())
	}
	if err := overwriteIn(dfd, f.state(), env); err != nil {
		warnings = append(warnings, fmt.Sprintf("%s: the update is saved but state.json was not replaced (%v); reads replay the history until it is repaired", f.id, err))
	}
	if rev%int64(s.cfg.BackupEvery) == 0 {
		if err := s.writeBackup(f, rev, env); err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: the update is saved but its backup was not written (%v); a repair rewrites it", f.id, err))
		}
	}
	return warnings
}

// replay returns the result of the event with key, if one of the last
// ckpt.KeyWindow events has it.
func (s *Store) replay(f files, cur current, key string) (ckpt.AppendResult, bool, error) {
	var e ckpt.Event
	var ok bool
	var err error
	if cur.keys == nil || cur.keys.has(key) {
		e, ok, err = findKey(f.history(), cur.end, key)
	}
	if err == nil && !ok {
		// Not in the history: an event repair moved aside may have it.
		var m movedKey
		if m, ok, err = findMovedKey(f, key); ok {
			return replayMoved(f, cur, m), true, nil
		}
	}
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("filestore: %s: looking for key %q: %w", f.id, key, err)
		}
		return ckpt.AppendResult{}, false, err
	}
	st, err := s.stateAt(f, cur, e.Seq)
	if err != nil {
		return ckpt.AppendResult{}, false, err
	}
	fillLiveness(st, f)
	return ckpt.AppendResult{State: st, Event: e, Replayed: true}, true, nil
}

// checkRev is the compare-and-swap of AppendOptions.IfRev.
func checkRev(id string, cur *ckpt.Checkpoint, ifRev int64) error {
	switch {
	case ifRev == 0:
		return nil
	case cur == nil:
		return fmt.Errorf("%w: %s does not exist, though revision %d was expected", ckpt.ErrNotFound, id, ifRev)
	case cur.Rev != ifRev:
		return &ckpt.ConflictError{ID: id, Want: ifRev, Have: cur.Rev}
	}
	return nil
}

// seal numbers e after the event with rev and sum, and returns its history
// line and the event as the line decodes.
func seal(e ckpt.Event, rev int64, sum string, now time.Time) ([]byte, ckpt.Event, error) {
	e.Seq, e.Prev, e.Sum = rev+1, sum, ""

	if e.At.IsZero() {
		e.At = now
	}
	e.At = ckpt.ClampTime(e.At, now, ckpt.MaxClockSkew)
	e.At = e.At.UTC()
	line, lineSum, err := ckpt.EncodeLine(e)
	if err != nil {
		return nil, ckpt.Event{}, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	// The event as its line decodes: the line holds Data as json.Marshal
	// writes a RawMessage (compacted, HTML-escaped), so do the same here
	// rather than decode the whole line again.
	if len(e.Data) > 0 {
		if e.Data, err = wire.Compact(e.Data); err != nil {
			return nil, ckpt.Event{}, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
		}
	} else {
		e.Data = nil
	}
	e.Sum = lineSum
	return line, e, nil
}

// appendLine appends line to f's history with one write and makes it
// durable, through hfd (the history, open O_APPEND) if it is not -1, and
// runs during (once, whatever fails) while the line's writeback is in
// flight: see afterSync. first says the history is new: its directory
// entries are synced too.
func appendLine(f files, hfd int, line []byte, first bool, during func()) error {
	var err error
	if hfd >= 0 {
		err = writeSyncWhile(hfd, f.history(), line, during)
	} else {
		err = appendSyncWhile(f.history(), line, during)
	}
	if err != nil {
		return fmt.Errorf("filestore: %s: appending to history (the update is not acknowledged; a partial line is cut by the next writer): %w", f.id, err)
	}
	if first {
		if err := atomicfile.SyncDir(f.dir); err != nil {
			return err
		}
		return atomicfile.SyncDir(filepath.Dir(f.dir))
	}
	return nil
}

// cutTail truncates f's history to end, cutting a torn last line, durably.
func cutTail(f files, end int64) error {
	h, err := openNoFollow(f.history(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("filestore: %s: cutting torn history tail: %w", f.id, err)
	}
	defer h.Close()
	if err := h.Truncate(end); err != nil {
		return fmt.Errorf("filestore: %s: cutting torn history tail: %w", f.id, err)
	}
	if err := datasync(h); err != nil {
		return fmt.Errorf("filestore: %s: cutting torn history tail: %w", f.id, err)
	}
	return nil
}

// writeBackup writes env as the backup of revision rev and retires the one
// that falls out of the window of the newest BackupKeep (revision
// rev - BackupEvery*BackupKeep): that file is renamed to the new name and
// overwritten in place, which spares the file system an inode freed and
// another allocated at every backup; without one, a new file is written.
// Repair removes any other stray backup. No temporary file and no fsync: a
// backup carries its checksum and its revision, so a torn or not yet
// overwritten one (a reader racing the write, or a crash) is skipped for an
// older one, and rewritten by repair.
func (s *Store) writeBackup(f files, rev int64, env []byte) error {
	if err := realDir(f.backups()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err // a link: nothing is written or renamed through it
	}
	path := f.backups() + sep + backupName(rev)
	if old := rev - int64(s.cfg.BackupEvery*s.cfg.BackupKeep); old > 0 {
		if err := os.Rename(f.backups()+sep+backupName(old), path); err == nil {
			return overwrite(path, env)
		}
	}
	err := writePlain(path, env)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(f.backups(), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		err = writePlain(path, env)
	}
	return err
}

// Beat implements ckpt.Store: it rewrites the checkpoint's beat file in
// place with the beat's time (see ckpt.NextBeat for the clamp) and the
// presence record (ckpt.Presence.ApplySignal), and sets the file's
// modification time to the beat's time, the stat-only hint of listings.
// The time lives in the content so that a store copied without
// modification times (`cp -r`) keeps it. No fsync, no history, and not the
// checkpoint's lock (an append's fdatasync does not hold a beat up): the
// read, merge and write hold the beat file's own lock, so concurrent beats
// (any processes) each build on the last one and none is lost. A beat
// older than the recorded one does not move the time back.
func (s *Store) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	if err := s.begin(ctx, id); err != nil {
		return err
	}
	f := s.files(id)
	bf, created, err := s.lockBeat(ctx, f)
	if err != nil {
		return err
	}
	defer bf.release()
	var last time.Time
	var seen ckpt.Presence
	if !created {
		last, seen = bf.read()
	}
	if beatRead != nil {
		beatRead()
	}
	if last.IsZero() && !created {
		// A beat file ckpt will not use: never write through a link, in
		// the checkpoint directory or at the beat file.
		if err := realDir(f.dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return notFound(id)
			}
			return err
		}
		if err := realFile(f.beat()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	at := ckpt.NextBeat(last, sig.At, s.clock())
	next := seen.ApplySignal(sig, at)
	if !last.IsZero() && !at.After(last) && samePresence(next, seen) {
		return nil
	}
	if err := s.writeBeat(f, bf, at, next); err != nil {
		if created {
			os.Remove(f.beat()) // leave no empty beat file (still locked: a waiter starts again)
		}
		return err
	}
	return setTimes(f.beat(), at)
}

// beatRead, when set (by tests only), runs in Beat after it read the
// recorded beat and before it writes the next.
var beatRead func()

// beatable returns nil if f's checkpoint can take a first beat: its
// directory is real and its history not empty.
func beatable(f files) error {
	if err := realDir(f.dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return notFound(f.id)
		}
		return err
	}
	if size, err := fileSize(f.history()); err != nil || size == 0 {
		return notFound(f.id)
	}
	return nil
}

// writeBeat logs the beat's record in the liveness log and then rewrites
// the beat file's record in place (no fsync: liveness, not history), for
// a checkpoint that exists. The log comes first, so that it is never
// behind the beat file (see livelog.go).
func (s *Store) writeBeat(f files, bf *beatFile, at time.Time, p ckpt.Presence) error {
	if size, err := fileSize(f.history()); err != nil || size == 0 {
		return notFound(f.id)
	}
	b, ok := appendBeat(nil, at, p)
	if !ok {
		var err error
		if b, err = json.Marshal(beatRecord{Seen: at, Presence: p}); err != nil {
			return fmt.Errorf("filestore: %s: presence: %w", f.id, err)
		}
	}
	if err := s.logLive(f.id, b); err != nil {
		return fmt.Errorf("filestore: %s: logging the beat in journal/live (nothing was written): %w", f.id, err)
	}
	if err := bf.write(f.beat(), b); err != nil {
		return fmt.Errorf("filestore: %s: writing the beat file: %w", f.id, err)
	}
	return nil
}

// samePresence reports whether a and b are the same record: writing a over
// a file that reads as b would change nothing.
func samePresence(a, b ckpt.Presence) bool {
	if a.State != b.State || a.Reason != b.Reason || a.For != b.For || a.Session != b.Session ||
		!a.Since.Equal(b.Since) || !a.At.Equal(b.At) || !a.Bound.Equal(b.Bound) || (a.Process == nil) != (b.Process == nil) {
		return false
	}
	return a.Process == nil || *a.Process == *b.Process
}

// Delete implements ckpt.Store. It moves the checkpoint's directory into the
// store's tmp directory (one atomic rename, synced) and then removes it.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.begin(ctx, id); err != nil {
		return err
	}
	f := s.files(id)
	unlock, err := s.lockCheckpoint(ctx, f, false)
	if err != nil {
		return err
	}
	cur, err := s.load(f)
	if err != nil {
		unlock()
		return err
	}
	if cur.state == nil {
		unlock()
		return notFound(id)
	}
	if cur.state.Archived == nil {
		unlock()
		return fmt.Errorf("%w: %s is not archived; only archived checkpoints can be deleted", ckpt.ErrInvalid, id)
	}
	tmp := filepath.Join(s.dir, tmpDir)
	if err := realDir(tmp); errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(tmp, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			unlock()
			return fmt.Errorf("filestore: deleting %s: %w", id, err)
		}
	} else if err != nil {
		unlock()
		return fmt.Errorf("filestore: deleting %s: %w", id, err)
	}
	// Hold tmp/ locked (shared with other deletes) until the trash is gone:
	// check and repair, which lock it exclusively, leave a delete in
	// progress alone and clean up only an interrupted one.
	release, missing, err := lockShared(tmp)
	if err != nil || missing {
		unlock()
		return fmt.Errorf("filestore: deleting %s: locking %s: %v", id, tmp, err)
	}
	defer release()
	trash, err := os.MkdirTemp(tmp, "deleted-")
	if err != nil {
		unlock()
		return fmt.Errorf("filestore: deleting %s: %w", id, err)
	}
	gone := filepath.Join(trash, "checkpoint")
	s.forget(id)
	err = s.journalDelete(f, cur, func() error { return os.Rename(f.dir, gone) })
	unlock()
	if err != nil {
		os.Remove(trash)
		return fmt.Errorf("filestore: deleting %s: %w", id, err)
	}
	// Its beats leave the liveness log's next fold (best effort: a record
	// of a checkpoint the journal does not hold is never read, and a
	// create logs a tombstone again).
	s.logLive(id, nil)
	if err := atomicfile.SyncDir(filepath.Dir(f.dir)); err != nil {
		return fmt.Errorf("filestore: deleting %s: %w", id, err)
	}
	return os.RemoveAll(trash)
}
