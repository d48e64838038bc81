package superpowers

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// ErrLocked is wrapped by Mirror's error when .metadata.lock stayed held for
// the whole LockTimeout.
var ErrLocked = errors.New("metadata.json is locked")

// MetadataPath returns where c's metadata.json lives under root:
// <root>/conductor/tracks/<track-id>/metadata.json. The track ID must be one
// plain path segment of ID characters, so no input can point outside root.
func MetadataPath(root string, c *ckpt.Checkpoint) (string, error) {
	track := TrackID(c)
	if ckpt.ValidateID(track) != nil || filepath.Base(track) != track || track[0] == '.' {
		return "", fmt.Errorf("%w: track ID %q cannot name a directory of conductor/tracks: set a task ID of letters, digits, '.', '_' and '-' (ckpt update %s --task ID)", ckpt.ErrInvalid, track, c.ID)
	}
	return filepath.Join(root, "conductor", "tracks", track, "metadata.json"), nil
}

// Mirror writes c to <root>/conductor/tracks/<track-id>/metadata.json while
// holding the document's lock, the directory .metadata.lock beside it: it
// makes the directory (waiting up to LockTimeout while another tool holds
// it, then failing with an error wrapping ErrLocked that names the lock) and
// removes it on return.
//
// Under the lock it reads the file as it is now and changes only what c
// changed since it was imported, so fields another tool wrote in the
// meantime survive. A file that is not valid JSON is kept aside as
// metadata.json.damaged-<unix seconds> before it is replaced.
func (f *Format) Mirror(root string, c *ckpt.Checkpoint) error {
	path, err := MetadataPath(root, c)
	if err != nil {
		return err
	}
	base, src, err := baseDocument(c)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	unlock, err := f.lock(filepath.Join(dir, ".metadata.lock"))
	if err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	defer unlock()

	theirs := src
	old, err := os.ReadFile(path)
	switch {
	case err == nil:
		if doc, perr := jsondoc.ParseObject(old); perr == nil {
			theirs = doc
		} else {
			aside := path + ".damaged-" + strconv.FormatInt(time.Now().Unix(), 10)
			if err := atomicfile.WriteFile(aside, old, 0o644); err != nil {
				return fmt.Errorf("mirroring %s: %s is not valid JSON (%v) and could not be kept aside: %w", c.ID, path, perr, err)
			}
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	ours := render(c, src, theirs)
	doc := ours
	if theirs != nil {
		if base == nil {
			base = jsondoc.NewObject()
		}
		doc = jsondoc.Merge(base, ours, theirs)
		dropRunFields(doc, ours)
	}
	data := doc.Indented()
	if bytes.Equal(old, data) {
		return nil
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	return nil
}

// runFields are the fields of a step entry that belong to one run of the
// step: ckpt owns them, and a field ours no longer has (a re-started step
// has no completion time or notes of its failed run, a step put back to
// pending no start) is dropped from the merged file, though the file had it
// and ckpt's base did not. The same holds for the task under way
// (progress.current_task) and the loop's step_started_at: a step that has
// not started shows neither the previous step's task nor its start.
var runFields = []string{"completed_at", "notes", "started_at", "last_updated"}

// dropRunFields removes from doc the run fields ours lacks.
func dropRunFields(doc, ours *jsondoc.Object) {
	dls, ok1 := jsondoc.AsObject(doc.Get("loop_state"))
	ols, ok2 := jsondoc.AsObject(ours.Get("loop_state"))
	if !ok1 || !ok2 {
		return
	}
	if dls.Has("step_started_at") && !ols.Has("step_started_at") {
		dls.Delete("step_started_at")
	}
	dcps, ok1 := jsondoc.AsObject(dls.Get("checkpoints"))
	ocps, ok2 := jsondoc.AsObject(ols.Get("checkpoints"))
	if ok1 && ok2 {
		for _, k := range dcps.Keys() {
			de, ok1 := jsondoc.AsObject(dcps.Get(k))
			oe, ok2 := jsondoc.AsObject(ocps.Get(k))
			if !ok1 || !ok2 {
				continue
			}
			for _, f := range runFields {
				if de.Has(f) && !oe.Has(f) {
					de.Delete(f)
				}
			}
			dropCurrentTask(de, oe)
			dcps.Set(k, de.Raw())
		}
		dls.Set("checkpoints", dcps.Raw())
	}
	doc.Set("loop_state", dls.Raw())
}

// dropCurrentTask removes progress.current_task from the merged entry de
// when ours, oe, does not write it there (an empty progress goes too).
func dropCurrentTask(de, oe *jsondoc.Object) {
	dp, ok := jsondoc.AsObject(de.Get("progress"))
	if !ok || !dp.Has("current_task") {
		return
	}
	if op, ok := jsondoc.AsObject(oe.Get("progress")); ok && op.Has("current_task") {
		return
	}
	dp.Delete("current_task")
	if dp.Len() == 0 {
		de.Delete("progress")
		return
	}
	de.Set("progress", dp.Raw())
}

// StaleLockAge is how long a .metadata.lock may be held before it is taken
// as left by a tool that died: a writer holds it for milliseconds.
const StaleLockAge = 5 * time.Minute

// StaleLock reports whether the lock directory lockDir exists and was made
// more than StaleLockAge before now, and since when it is held.
func StaleLock(lockDir string, now time.Time) (since time.Time, stale bool) {
	fi, err := os.Lstat(lockDir)
	if err != nil || !fi.IsDir() {
		return time.Time{}, false
	}
	return fi.ModTime(), now.Sub(fi.ModTime()) > StaleLockAge
}

// lock takes superpowers' (seed 000) directory lock and returns its release. A lock
// older than StaleLockAge fails at once instead of after LockTimeout.
func (f *Format) lock(lockDir string) (func(), error) {
	timeout, poll := f.LockTimeout, f.LockPoll
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	for {
		err := os.Mkdir(lockDir, 0o755)
		if err == nil {
			return func() { os.Remove(lockDir) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("taking the lock %s: %w", lockDir, err)
		}
		if since, stale := StaleLock(lockDir, time.Now()); stale {
			// Left by a tool that died: waiting for it stalls every write.
			return nil, fmt.Errorf("%w: %s is stale (held since %s, more than %s): no tool holds metadata.json that long; if none is running, remove it with: rmdir %s",
				ErrLocked, lockDir, since.UTC().Format(time.RFC3339), StaleLockAge, lockDir)
		}
		if time.Now().After(deadline) {
			held := ""
			if fi, err := os.Stat(lockDir); err == nil {
				held = fmt.Sprintf(" (held since %s)", fi.ModTime().UTC().Format(time.RFC3339))
			}
			return nil, fmt.Errorf("%w: %s is still held after %s%s: another tool is updating metadata.json; if none is running, remove the stale lock with: rmdir %s",
				ErrLocked, lockDir, timeout, held, lockDir)
		}
		time.Sleep(poll)
	}
}
