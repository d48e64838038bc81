// Package filestore is ckpt's embedded default backend: a `.ckpt/` directory
// of plain files, one directory per checkpoint holding its chained history,
// a state cache, backups, a lock file and a heartbeat file. The format, the
// invariants and the write and recovery orders are in docs/design.md.
//
// A Store is safe for concurrent use by many goroutines and many processes:
// writers of one checkpoint are serialised by a kernel lock (flock) on that
// checkpoint alone, and readers take no lock.
package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// Names inside a store.
const (
	// StoreDirName is the name of a store directory that Find looks for.
	StoreDirName = ".ckpt"

	configName     = "config.json"
	checkpointsDir = "checkpoints"
	tmpDir         = "tmp"
	historyName    = "history.jsonl"
	stateName      = "state.json"
	lockName       = "lock"
	beatName       = "beat"
	backupsDir     = "backups"
	quarantineDir  = "quarantine"
	damagedPrefix  = historyName + ".damaged-"
	tornPrefix     = historyName + ".torn-"

	configFormat  = "ckpt-filestore"
	configVersion = 1
)

// ownDirs are the directories every operation may write in, checked once
// by Open: a symbolic link at one of them stops the store until repair
// moves it aside (tmp/ is checked by Delete, which alone uses it).
var ownDirs = []string{checkpointsDir, journalDir, journalDir + sep + pendingDir}

// Defaults for Options.
const (
	DefaultBackupEvery = 5
	DefaultBackupKeep  = 10
)

// Options are the settings of a new store. A zero field takes its default.
type Options struct {
	// BackupEvery is how many revisions apart state backups are written
	// (default 5).
	BackupEvery int
	// BackupKeep is how many backups per checkpoint are kept (default 10).
	BackupKeep int
}

// config is config.json.
type config struct {
	Format      string `json:"format"`
	Version     int    `json:"version"`
	BackupEvery int    `json:"backup_every"`
	BackupKeep  int    `json:"backup_keep"`
}

// Store is a filestore opened at a `.ckpt` directory. It implements
// ckpt.Store; see docs/design.md for what it keeps on disk.
type Store struct {
	dir string
	cfg config

	mu       sync.Mutex
	written  map[string]*written  // this Store's last write per checkpoint
	wake     chan struct{}        // closed at this Store's next journal write
	markers  *procMarkers         // this Store's pending-marker file, once it wrote
	listed   *view                // the last List's view, which the next continues (loadViewAfter)
	liveBase *liveBase            // the last bulk listing's liveness, which the next continues (loadLive)
	held     map[string]heldFiles // descriptors kept between appends (heldfiles_unix.go)
	heldGen  uint64               // changed by Close: sets opened before are closed when released
	jmu      sync.Mutex           // guards jf
	jf       jfast                // cached journal files of Append's hot path

	now func() time.Time // the store's clock; see SetClock

	// linked is why one of the store's own directories (ownDirs) cannot
	// be used (a symbolic link), found by Open; nil when all can. Only
	// Check and Repair work then.
	linked error
}

// SetClock makes now the store's clock: the time of events and beats that
// carry none, and the bound of clock skew (ckpt.MaxClockSkew). A local
// store's clock is its process's, so a command that pins its clock (CKPT_NOW)
// pins the store's too. Call it before the store is used; nil means time.Now.
func (s *Store) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.now = now
}

// clock returns the store's current time.
func (s *Store) clock() time.Time {
	if s.now == nil {
		return time.Now()
	}
	return s.now()
}

var _ ckpt.Store = (*Store)(nil)

// Init creates a store in dir, the `.ckpt` directory itself, and opens it.
// dir may exist if it is empty. It fails with an error wrapping ckpt.ErrExists
// if a store is already there, and ckpt.ErrInvalid for negative options or a
// non-empty dir that is not a store.
func Init(dir string, opts Options) (*Store, error) {
	if opts.BackupEvery < 0 || opts.BackupKeep < 0 {
		return nil, fmt.Errorf("%w: backup every %d, keep %d: give positive numbers, or 0 for the defaults (%d and %d)",
			ckpt.ErrInvalid, opts.BackupEvery, opts.BackupKeep, DefaultBackupEvery, DefaultBackupKeep)
	}
	cfg := config{Format: configFormat, Version: configVersion, BackupEvery: opts.BackupEvery, BackupKeep: opts.BackupKeep}
	if cfg.BackupEvery == 0 {
		cfg.BackupEvery = DefaultBackupEvery
	}
	if cfg.BackupKeep == 0 {
		cfg.BackupKeep = DefaultBackupKeep
	}
	if _, err := os.Stat(filepath.Join(dir, configName)); err == nil {
		return nil, fmt.Errorf("%w: a ckpt store is already initialised at %s", ckpt.ErrExists, dir)
	}
	switch des, err := os.ReadDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("filestore: init %s: %w", dir, err)
	case len(des) > 0:
		return nil, fmt.Errorf("%w: %s exists, is not empty and is not a ckpt store: choose another directory or empty it", ckpt.ErrInvalid, dir)
	}
	for _, d := range []string{dir, filepath.Join(dir, checkpointsDir), filepath.Join(dir, tmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("filestore: init: %w", err)
		}
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, configName), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("filestore: init: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
		return nil, fmt.Errorf("filestore: init: %w", err)
	}
	s, err := Open(dir)
	if err != nil {
		return nil, err
	}
	jl, err := s.lockJournalReady() // an empty journal and index
	if err != nil {
		return nil, fmt.Errorf("filestore: init: %w", err)
	}
	jl.unlock()
	return s, nil
}

// Open opens the store at dir, the `.ckpt` directory itself. It writes
// nothing. If dir is not a store the error wraps ckpt.ErrNoStore and says to
// run `ckpt init`.
func Open(dir string) (*Store, error) {
	b, err := readNoFollow(filepath.Join(dir, configName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s (no %s)", ckpt.ErrNoStore, dir, configName)
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: open %s: %w", dir, err)
	}
	cfg, err := parseConfig(b, filepath.Join(dir, configName))
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, cfg: cfg}
	for _, name := range ownDirs {
		if err := realDir(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// Every method but Check and Repair refuses; repair moves it
			// aside.
			s.linked = err
			break
		}
	}
	return s, nil
}

// Find walks up from start, like git, to the first directory holding a
// `.ckpt` store and returns the store's path (the `.ckpt` directory). If
// there is none the error wraps ckpt.ErrNoStore.
func Find(start string) (string, error) {
	d, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("filestore: find store from %s: %w", start, err)
	}
	for {
		cand := filepath.Join(d, StoreDirName)
		if fi, err := os.Stat(filepath.Join(cand, configName)); err == nil && fi.Mode().IsRegular() {
			return cand, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%w in %s or any parent directory", ckpt.ErrNoStore, start)
		}
		d = parent
	}
}

// Dir returns the store's directory, as given to Open.
func (s *Store) Dir() string { return s.dir }

// Close drops the Store's memory of its own writes; a Store holds no open
// files between calls. The Store stays usable.
func (s *Store) Close() error {
	s.mu.Lock()
	s.written = nil
	m := s.markers
	s.markers = nil
	s.mu.Unlock()
	m.close()
	s.jmu.Lock()
	s.jf.close()
	s.jmu.Unlock()
	s.closeHeldFiles()
	return nil
}

// begin checks what every method checks first: the context, the store's
// own directories and the ID.
func (s *Store) begin(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.linked != nil {
		return s.linked
	}
	return ckpt.ValidateID(id)
}

// dirName maps a valid ID to its directory name: '/' becomes '+', which is
// not an ID character, so the mapping is one to one.
func dirName(id string) string { return strings.ReplaceAll(id, "/", "+") }

// idFromDirName is the inverse of dirName; ok is false for a name that no
// valid ID maps to.
func idFromDirName(name string) (string, bool) {
	id := strings.ReplaceAll(name, "+", "/")
	return id, ckpt.ValidateID(id) == nil
}

// files names the files of one checkpoint. Build it only from a valid ID.
type files struct {
	id  string
	dir string
}

func (s *Store) files(id string) files {
	return files{id: id, dir: filepath.Join(s.dir, checkpointsDir, dirName(id))}
}

// Paths are concatenated, not joined: f.dir is clean and the names are
// constants, and List builds 30,000 of them.
func (f files) history() string { return f.dir + sep + historyName }
func (f files) state() string   { return f.dir + sep + stateName }
func (f files) lock() string    { return f.dir + sep + lockName }
func (f files) beat() string    { return f.dir + sep + beatName }
func (f files) backups() string { return f.dir + sep + backupsDir }

const sep = string(filepath.Separator)

// damaged formats an error wrapping ckpt.ErrCorrupt that names the repair.
func damaged(id, format string, args ...any) error {
	return fmt.Errorf("%w: checkpoint %s: %s", ckpt.ErrCorrupt, id, fmt.Sprintf(format, args...))
}

// reason returns err's text without a leading "store damaged: ", for
// wrapping a root error inside damaged.
func reason(err error) string {
	return strings.TrimPrefix(err.Error(), ckpt.ErrCorrupt.Error()+": ")
}
