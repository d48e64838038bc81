package claude

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/atomicfile"
)

// EnvStateDir overrides the directory where the hooks keep what they
// remember between calls (see StateDir).
const EnvStateDir = "CKPT_STATE_DIR"

// StateDir is the client-local directory where the hooks keep their
// bookkeeping, whatever the store is: $CKPT_STATE_DIR, else
// $XDG_STATE_HOME/ckpt, else ~/.local/state/ckpt (the XDG base directory
// rule: state that survives a restart but is not worth a backup). It
// holds hooks/state/<id>.json (prompt and Stop-block counts) and
// hooks/backups/<id>/ (the every-5th-prompt snapshots). "" when none can
// be named (no home directory).
func StateDir(getenv func(string) string, home string) string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if d := strings.TrimSpace(getenv(EnvStateDir)); d != "" {
		return filepath.Clean(d)
	}
	if x := strings.TrimSpace(getenv("XDG_STATE_HOME")); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "ckpt")
	}
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state", "ckpt")
}

// fileName is id as one file name: '/' becomes '~', which IDs cannot
// contain, so names never collide.
func fileName(id string) string { return strings.ReplaceAll(id, "/", "~") }

// DefaultBackupKeep is how many prompt snapshots the hooks keep per
// checkpoint, as many as a filestore keeps backups.
const DefaultBackupKeep = 10

// snapshot writes the state of checkpoint id, as `ckpt show --json` prints
// it, to dir/<id>/state-<rev>.json, durably, and removes all but the
// newest DefaultBackupKeep. A snapshot of that revision already there is
// left as it is. The snapshots are plain state files outside the store: a
// copy a person or a script can read even if the store is lost (plan.md's (seed 004)
// "every 5th prompt" recovery point).
func (h *Handler) snapshot(ctx context.Context, dir, id string) error {
	c, err := h.Store.Get(ctx, id, 0)
	if err != nil {
		return err
	}
	dir = filepath.Join(dir, fileName(id))
	path := filepath.Join(dir, fmt.Sprintf("state-%012d.json", c.Rev))
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return err
	}
	names, err := filepath.Glob(filepath.Join(dir, "state-*.json"))
	if err != nil {
		return err
	}
	slices.Sort(names) // the revision is zero-padded: names sort by revision
	for len(names) > DefaultBackupKeep {
		if err := os.Remove(names[0]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		names = names[1:]
	}
	return nil
}
