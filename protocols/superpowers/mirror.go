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
	"github.com/ckpt-dev/ckpt/protocols/internal/jsondoc"
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
		return "", fmt.Errorf("%w: track ID %q cannot name a directory of conductor/tracks: set a task ID of letters, digits, '.', '_' and '-' (ckpt update %s --task-id ID)", ckpt.ErrInvalid, track, c.ID)
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
	ours := render(c, src)
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
	doc := ours
	if theirs != nil {
		if base == nil {
			base = jsondoc.NewObject()
		}
		doc = jsondoc.Merge(base, ours, theirs)
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

// lock takes seed 000's directory lock and returns its release.
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
