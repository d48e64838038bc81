package mirror

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Spec describes a mirror as a person gives it.
type Spec struct {
	Format string
	// Root is the directory the seed system's files live under: relative
	// to WorkDir, or absolute; "" is WorkDir itself.
	Root, WorkDir string
	// ID selects one checkpoint; else Prefix selects the IDs starting
	// with it; neither selects every checkpoint.
	ID, Prefix string
	// RootName is how the surface names Root in messages ("root" when "").
	RootName string
}

// EntryFor is the list entry of the mirror s describes, its root stored as
// the list stores roots (StoredRoot). It refuses (ErrInvalid) an unknown
// format and a relative root that climbs out of the project (a directory
// elsewhere is given as an absolute path).
func (l List) EntryFor(s Spec) (Entry, error) {
	if _, err := NewFormat(s.Format); err != nil {
		return Entry{}, err
	}
	name := s.RootName
	if name == "" {
		name = "root"
	}
	abs := s.Root
	if abs == "" {
		abs = s.WorkDir
	} else if !filepath.IsAbs(abs) {
		abs = filepath.Join(s.WorkDir, abs)
	}
	abs = filepath.Clean(abs)
	stored := l.StoredRoot(abs)
	if s.Root != "" && !filepath.IsAbs(s.Root) && filepath.IsAbs(stored) {
		return Entry{}, fmt.Errorf("%w: %s %s climbs out of the project %s: give a directory inside it, or an absolute path (%s) to mirror elsewhere", ckpt.ErrInvalid, name, s.Root, l.Project, abs)
	}
	e := Entry{Format: s.Format, Root: stored, ID: s.ID, Prefix: s.Prefix}
	if e.Unbound() {
		return Entry{}, fmt.Errorf("%w: a ccc mirror writes one file, .ccc-progress.md, per project, so it mirrors one checkpoint: give --id ID (with %s, each new checkpoint would overwrite the file)", ckpt.ErrInvalid, e.Selector())
	}
	return e, e.Check()
}

// CheckRoot refuses (ErrInvalid) a mirror whose root is a file; a root
// that does not exist yet is made when the mirror is first written. name
// is how the surface names the root in the message.
func (l List) CheckRoot(e Entry, name string) error {
	if fi, err := os.Stat(l.RootDir(e)); err == nil && !fi.IsDir() {
		return fmt.Errorf("%w: %s %s is a file: give the directory the seed system's files live under", ckpt.ErrInvalid, name, l.RootDir(e))
	}
	return nil
}

// Add adds entry e to the list; an entry the list has already is
// ErrExists. It writes no mirror: (*Store).SyncAll does.
func (l List) Add(e Entry) error {
	_, err := l.Edit(func(cfg *Config) error {
		if slices.Contains(cfg.Mirrors, e) {
			return fmt.Errorf("%w: %s is mirrored under %s for %s already", ckpt.ErrExists, e.Format, l.RootDir(e), e.Selector())
		}
		cfg.Mirrors = append(cfg.Mirrors, e)
		return nil
	})
	return err
}

// Remove removes entry e from the list; its files are left as they are.
// No such entry is ErrNotFound.
func (l List) Remove(e Entry) error {
	_, err := l.Edit(func(cfg *Config) error {
		i := slices.Index(cfg.Mirrors, e)
		if i < 0 {
			return fmt.Errorf("%w: no mirror of %s under %s for %s", ckpt.ErrNotFound, e.Format, l.RootDir(e), e.Selector())
		}
		cfg.Mirrors = slices.Delete(cfg.Mirrors, i, i+1)
		return nil
	})
	return err
}
