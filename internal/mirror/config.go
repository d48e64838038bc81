// Package mirror keeps seed-format files (superpowers' metadata.json,
// .ccc-progress.md, agent_checkpoints/, sitebuilder's progress/, plan.md's
// .checkpoint/) in step with the checkpoints of any ckpt.Store.
//
// A mirror list (List) names, per seed format, the root directory the seed
// system's files live under and the checkpoints it mirrors. Wrap decorates
// a store so that every change made through it rewrites the mirrors of the
// checkpoint it changed; Follow does the same from a store's change feed,
// for changes other processes or machines make; Check compares the files
// with the checkpoints, writing nothing, and Repair rewrites what Check
// finds wrong. Mirrors are written after the store has made the change
// durable, best effort: a mirror that fails is a warning, never a failed
// write.
//
// Files are written only under the roots of the list: a relative root is
// taken from the list's project directory and must stay inside it (a root
// that climbs out with ".." is refused; give an absolute path for a
// directory elsewhere).
package mirror

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
)

// Formats lists the seed formats by name, in seed order.
var Formats = []string{superpowers.Name, ccc.Name, agentcheckpoints.Name, sitebuilder.Name, plan.Format{}.Name()}

// NewFormat returns the format called name with its document's settings,
// or an error wrapping ckpt.ErrInvalid that lists the names.
func NewFormat(name string) (protocols.Format, error) {
	switch name {
	case superpowers.Name:
		return superpowers.New(), nil
	case ccc.Name:
		return ccc.New(), nil
	case agentcheckpoints.Name:
		return agentcheckpoints.New(), nil
	case sitebuilder.Name:
		return sitebuilder.New(), nil
	case plan.Format{}.Name():
		return plan.Format{}, nil
	}
	return nil, fmt.Errorf("%w: unknown format %q: use one of %s", ckpt.ErrInvalid, name, strings.Join(Formats, ", "))
}

// FileName is the name of the mirror list in a local store's directory.
const FileName = "mirrors.json"

// Version is the version of the mirror list this package writes.
const Version = 1

// Entry is one mirror: checkpoints it selects are written in Format under
// Root after every change.
type Entry struct {
	Format string `json:"format"`
	// Root is the directory the seed system's files live under: relative
	// to the list's project directory (and inside it), or absolute.
	Root string `json:"root"`
	// ID selects one checkpoint; Prefix, when ID is empty, every checkpoint
	// whose ID starts with it ("" selects every checkpoint).
	ID     string `json:"id,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

// Selects reports whether the entry mirrors checkpoint id.
func (e Entry) Selects(id string) bool {
	if e.ID != "" {
		return id == e.ID
	}
	return strings.HasPrefix(id, e.Prefix)
}

// Unbound reports a mirror of a format with one file per project
// (.ccc-progress.md) that selects more than one checkpoint: every
// checkpoint it selects would overwrite the others' file. Such an entry is
// refused when added (EntryFor) and, in a list written before that, writes
// nothing and is reported by Check.
func (e Entry) Unbound() bool {
	return e.Format == ccc.Name && e.ID == ""
}

// unboundHint says how to bind an unbound entry to one checkpoint.
func (e Entry) unboundHint() string {
	return "bind it to one checkpoint: ckpt mirror rm ccc, then ckpt mirror add ccc --id ID (the checkpoint whose progress the file carries)"
}

// Selector describes what the entry selects, for listings.
func (e Entry) Selector() string {
	switch {
	case e.ID != "":
		return "id " + e.ID
	case e.Prefix != "":
		return "prefix " + e.Prefix
	}
	return "every checkpoint"
}

// Check validates an entry: a known format, a root that stays inside the
// project unless absolute, a valid ID. Errors wrap ckpt.ErrInvalid.
func (e Entry) Check() error {
	if _, err := NewFormat(e.Format); err != nil {
		return err
	}
	if strings.TrimSpace(e.Root) == "" {
		return fmt.Errorf("%w: mirror of %s has no root directory", ckpt.ErrInvalid, e.Format)
	}
	if climbsOut(e.Root) {
		return fmt.Errorf("%w: mirror of %s has the root %q, which climbs out of the project: give a directory inside it, or an absolute path for one elsewhere", ckpt.ErrInvalid, e.Format, e.Root)
	}
	if e.ID != "" && e.Prefix != "" {
		return fmt.Errorf("%w: mirror of %s has both an id and a prefix: give one", ckpt.ErrInvalid, e.Format)
	}
	if e.ID != "" {
		return ckpt.ValidateID(e.ID)
	}
	return nil
}

// climbsOut reports a relative root that leaves the directory it is taken
// from.
func climbsOut(root string) bool {
	if filepath.IsAbs(root) {
		return false
	}
	r := filepath.Clean(filepath.FromSlash(root))
	return r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator))
}

// Config is the mirror list's content.
type Config struct {
	Version int     `json:"version"`
	Mirrors []Entry `json:"mirrors"`
}

// Decode parses and checks a mirror list. Errors wrap ckpt.ErrInvalid.
func Decode(data []byte) (Config, error) {
	var cfg Config
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("%w: not a mirror list: %v", ckpt.ErrInvalid, err)
	}
	if cfg.Version != Version {
		return Config{}, fmt.Errorf("%w: mirror list version %d: this ckpt reads version %d", ckpt.ErrInvalid, cfg.Version, Version)
	}
	for i, m := range cfg.Mirrors {
		if err := m.Check(); err != nil {
			return Config{}, fmt.Errorf("mirror %d: %w", i+1, err)
		}
	}
	return cfg, nil
}

// List is where a mirror list lives: File, and Project, the directory its
// relative roots are taken from. The list is client-local whatever the
// store is: for a local store it is mirrors.json in the store's directory
// (ForStoreDir), for any other store a file the client names.
type List struct {
	File    string
	Project string
}

// ForStoreDir is the list of the local store in storeDir: storeDir/
// mirrors.json, with roots taken from the project directory, the store's
// parent.
func ForStoreDir(storeDir string) List {
	return List{File: filepath.Join(storeDir, FileName), Project: filepath.Dir(storeDir)}
}

// ForFile is a list kept in file, with roots taken from its directory.
func ForFile(file string) List {
	return List{File: file, Project: filepath.Dir(file)}
}

// ProjectFile is the mirror list used with a store that is not a local
// directory (a server, PostgreSQL): a file in the working directory.
const ProjectFile = ".ckpt-mirrors.json"

// Locate is the mirror list a client uses: file when one is named (taken
// from workDir when relative); else, for a local store in storeDir, that
// store's list (ForStoreDir); else ProjectFile in workDir. Relative roots
// of a list file are taken from its directory.
func Locate(file, workDir, storeDir string) List {
	switch {
	case file != "":
		if !filepath.IsAbs(file) {
			file = filepath.Join(workDir, file)
		}
		return ForFile(file)
	case storeDir != "":
		return ForStoreDir(storeDir)
	}
	return ForFile(filepath.Join(workDir, ProjectFile))
}

// RootDir is e's root as an absolute path.
func (l List) RootDir(e Entry) string {
	if filepath.IsAbs(e.Root) {
		return filepath.Clean(e.Root)
	}
	return filepath.Join(l.Project, filepath.FromSlash(e.Root))
}

// StoredRoot is how the absolute directory root is written in the list:
// relative to the project directory when inside it, so the project can
// move, else absolute.
func (l List) StoredRoot(root string) string {
	rel, err := filepath.Rel(l.Project, root)
	if err != nil || climbsOut(rel) || filepath.IsAbs(rel) {
		return root
	}
	return filepath.ToSlash(rel)
}

// Read reads the list. A missing file is an empty list; a damaged one is
// an error that says how to mend it.
func (l List) Read() (Config, error) {
	data, err := os.ReadFile(l.File)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{Version: Version}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("reading the mirror list: %w", err)
	}
	cfg, err := Decode(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w: fix the file by hand, or remove it and add the mirrors again with ckpt mirror add", l.File, err)
	}
	return cfg, nil
}

// Edit changes the list under its lock file (File + ".lock"; for
// mirrors.json, mirrors.lock as before), so two processes editing it at
// once do not lose an entry, and writes it durably.
func (l List) Edit(edit func(*Config) error) (Config, error) {
	lock := flock.New(strings.TrimSuffix(l.File, ".json") + ".lock")
	if err := lock.Lock(); err != nil {
		return Config{}, fmt.Errorf("locking the mirror list: %w", err)
	}
	defer lock.Unlock()
	cfg, err := l.Read()
	if err != nil {
		return Config{}, err
	}
	if err := edit(&cfg); err != nil {
		return Config{}, err
	}
	if cfg.Mirrors == nil {
		cfg.Mirrors = []Entry{}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return Config{}, err
	}
	if err := atomicfile.WriteFile(l.File, append(data, '\n'), 0o644); err != nil {
		return Config{}, fmt.Errorf("writing the mirror list: %w", err)
	}
	return cfg, nil
}
