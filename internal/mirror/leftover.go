package mirror

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
)

// LeftoverAge is how old a temporary file must be before Check calls it
// left by an interrupted write: a live writer renames its file within
// milliseconds, so Repair never removes one still being written.
const LeftoverAge = time.Minute

// tempName matches the temporary files of an atomic write (internal/
// atomicfile): ".<file name>.tmp<digits>" beside the file.
//
// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var tempName = lazyregexp.New(`^\.(.+)\.tmp[0-9]+$`)

// writtenDir is a directory a format writes files in, and which of its
// files are the format's (so only their temporary files are touched).
type writtenDir struct {
	dir  string
	ours func(name string) bool
}

func named(names ...string) func(string) bool {
	return func(n string) bool {
		for _, x := range names {
			if n == x {
				return true
			}
		}
		return false
	}
}

func jsonFile(n string) bool { return strings.HasSuffix(n, ".json") }

// writtenDirs are the directories format e writes c's files in.
func (m *Store) writtenDirs(e Entry, c *ckpt.Checkpoint) []writtenDir {
	root := m.list.RootDir(e)
	switch e.Format {
	case superpowers.Name:
		if p, err := superpowers.MetadataPath(root, c); err == nil {
			return []writtenDir{{filepath.Dir(p), named("metadata.json")}}
		}
	case ccc.Name:
		return []writtenDir{{root, named(ccc.ProgressFile)}}
	case agentcheckpoints.Name:
		dir := filepath.Join(root, agentcheckpoints.Dir)
		return []writtenDir{{dir, jsonFile}, {filepath.Join(dir, agentcheckpoints.BackupDir), jsonFile}}
	case sitebuilder.Name:
		return []writtenDir{{filepath.Join(root, sitebuilder.Dir), jsonFile}, {filepath.Join(root, "progress"), named("STATUS.md")}}
	case plan.Format{}.Name():
		if ckpt.ValidateID(c.ID) == nil {
			dir := filepath.Join(root, "plans", filepath.FromSlash(c.ID))
			return []writtenDir{{dir, named("plan.md")}, {filepath.Join(dir, plan.CheckpointDir), named("state.json", "recovery.json")}}
		}
	}
	return nil
}

// leftovers finds the temporary files older than LeftoverAge in the
// directories e writes c's files in, each directory once (seen).
func (m *Store) leftovers(e Entry, c *ckpt.Checkpoint, seen map[string]bool) []Problem {
	if climbsOut(e.Root) {
		return nil
	}
	var out []Problem
	cutoff := time.Now().Add(-LeftoverAge)
	for _, w := range m.writtenDirs(e, c) {
		if seen[w.dir] {
			continue
		}
		seen[w.dir] = true
		list, err := os.ReadDir(w.dir)
		if err != nil {
			continue
		}
		for _, d := range list {
			sub := tempName.Get().FindStringSubmatch(d.Name())
			if sub == nil || !d.Type().IsRegular() || !w.ours(sub[1]) {
				continue
			}
			if fi, err := d.Info(); err != nil || fi.ModTime().After(cutoff) {
				continue
			}
			out = append(out, Problem{Format: e.Format, Root: m.list.RootDir(e), ID: c.ID, Path: filepath.Join(w.dir, d.Name()),
				What: "a temporary file left by an interrupted write", Repair: "ckpt repair (removes it)", leftover: true})
		}
	}
	return out
}

// staleLock reports superpowers' (seed 000) .metadata.lock beside c's metadata.json
// when it is older than superpowers.StaleLockAge: a tool died holding it,
// and every mirror write of the track fails until it is removed.
func (m *Store) staleLock(e Entry, c *ckpt.Checkpoint) *Problem {
	if e.Format != superpowers.Name || climbsOut(e.Root) {
		return nil
	}
	path, err := superpowers.MetadataPath(m.list.RootDir(e), c)
	if err != nil {
		return nil
	}
	lock := filepath.Join(filepath.Dir(path), ".metadata.lock")
	since, stale := superpowers.StaleLock(lock, time.Now())
	if !stale {
		return nil
	}
	return &Problem{Format: e.Format, Root: m.list.RootDir(e), ID: c.ID, Path: lock,
		What:   "a stale lock, held since " + since.UTC().Format(time.RFC3339) + ": metadata.json is not written while it stays",
		Repair: "rmdir " + lock + " if no tool is updating metadata.json, then ckpt mirror sync " + c.ID}
}
