package agentcheckpoints

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// BackupDir is the folder, inside Dir, that holds the backups.
const BackupDir = "backups"

// FileName returns the name of c's file in agent_checkpoints/: the name of
// the file it was imported from, else the last segment of its ID plus
// ".json" (kai-7/secondary_a → secondary_a.json). The error says what to
// change when the name could not be a file of that folder.
func FileName(c *ckpt.Checkpoint) (string, error) {
	m, _, err := jsondoc.ReadMeta(c, Name)
	if err != nil {
		return "", err
	}
	name := m.File
	if name == "" {
		name = c.ID[strings.LastIndexByte(c.ID, '/')+1:] + ".json"
	}
	if err := checkFileName(name); err != nil {
		return "", fmt.Errorf("%s: %w", c.ID, err)
	}
	return name, nil
}

// checkFileName accepts only a plain file name of ID characters ending in
// .json, so no input can name a file outside agent_checkpoints/.
func checkFileName(name string) error {
	stem, ok := strings.CutSuffix(name, ".json")
	if !ok || stem == "" || strings.Contains(stem, "/") || ckpt.ValidateID(stem) != nil || strings.HasPrefix(stem, ".") {
		return fmt.Errorf("%w: %q is not a usable agent checkpoint file name: use letters, digits, '.', '_' and '-' and end it in .json (remove meta %s.file to fall back to the checkpoint ID)", ckpt.ErrInvalid, name, Name)
	}
	return nil
}

// Mirror writes c to <root>/agent_checkpoints/<file>.json durably. Before it
// replaces a file whose content differs, it copies the old content to
// agent_checkpoints/backups/<name>_YYYYMMDD_HHMMSS.json (agent-checkpoints' (seed 002) naming,
// in UTC) and deletes all but the newest Keep backups of that file. Old
// content that is not JSON is saved as <name>_YYYYMMDD_HHMMSS.json.damaged
// instead, never as a backup.
//
// The coordination times the old file records (ReadCoordination) are
// carried into the new one.
func (f *Format) Mirror(root string, c *ckpt.Checkpoint) error {
	return f.MirrorCoordinated(root, c, Coordination{})
}

// MirrorCoordinated is Mirror with co's times written into
// coordination_state (ExportCoordinated); a zero time carries the old
// file's.
func (f *Format) MirrorCoordinated(root string, c *ckpt.Checkpoint, co Coordination) error {
	name, err := FileName(c)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	path := filepath.Join(dir, name)
	old, err := os.ReadFile(path)
	if err == nil {
		was := ReadCoordination(old)
		if co.InboxCheck.IsZero() {
			co.InboxCheck = was.InboxCheck
		}
		if co.EpicReadmeUpdate.IsZero() {
			co.EpicReadmeUpdate = was.EpicReadmeUpdate
		}
	}
	data, xerr := f.ExportCoordinated(c, co)
	if xerr != nil {
		return xerr
	}
	switch {
	case err == nil && bytes.Equal(old, data):
		return nil
	case err == nil && !json.Valid(old):
		// A damaged file is kept, but never as the newest backup: the
		// document's own restore takes that one.
		if err := f.keepDamaged(dir, name, old); err != nil {
			return fmt.Errorf("mirroring %s: saving the damaged %s before replacing it: %w", c.ID, path, err)
		}
	case err == nil:
		if err := f.backup(dir, name, old); err != nil {
			return fmt.Errorf("mirroring %s: backing up %s before replacing it: %w", c.ID, path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("mirroring %s: reading %s to back it up: %w", c.ID, path, err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	return nil
}

// backupName matches "<stem>_YYYYMMDD_HHMMSS.json" and, for a second backup
// within one second, "<stem>_YYYYMMDD_HHMMSS_N.json".
func backupPattern(stem string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(stem) + `_(\d{8}_\d{6})(?:_(\d+))?\.json$`)
}

type backupFile struct {
	name  string
	stamp string
	n     int
}

// backups lists the backups of stem in dir, oldest first.
func backups(dir, stem string) ([]backupFile, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	re := backupPattern(stem)
	var out []backupFile
	for _, e := range entries {
		m := re.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		n := 1
		if m[2] != "" {
			n, _ = strconv.Atoi(m[2])
		}
		out = append(out, backupFile{e.Name(), m[1], n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].stamp != out[j].stamp {
			return out[i].stamp < out[j].stamp
		}
		return out[i].n < out[j].n
	})
	return out, nil
}

func (f *Format) backup(dir, name string, data []byte) error {
	bdir := filepath.Join(dir, BackupDir)
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return err
	}
	stem := strings.TrimSuffix(name, ".json")
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	stamp := now().UTC().Format("20060102_150405")
	list, err := backups(bdir, stem)
	if err != nil {
		return err
	}
	n := 1
	for _, b := range list {
		if b.stamp == stamp && b.n >= n {
			n = b.n + 1
		}
	}
	file := fmt.Sprintf("%s_%s.json", stem, stamp)
	if n > 1 {
		file = fmt.Sprintf("%s_%s_%d.json", stem, stamp, n)
	}
	if err := atomicfile.WriteFile(filepath.Join(bdir, file), data, 0o644); err != nil {
		return err
	}
	keep := f.Keep
	if keep <= 0 {
		keep = 10
	}
	list = append(list, backupFile{file, stamp, n})
	if len(list) <= keep {
		return nil
	}
	for _, b := range list[:len(list)-keep] {
		if err := os.Remove(filepath.Join(bdir, b.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return atomicfile.SyncDir(bdir)
}

// keepDamaged saves the content of a damaged checkpoint file as
// backups/<name>_YYYYMMDD_HHMMSS.json.damaged: nothing is lost, and no
// restore that takes the newest backups/*.json picks it.
func (f *Format) keepDamaged(dir, name string, data []byte) error {
	bdir := filepath.Join(dir, BackupDir)
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		return err
	}
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	file := fmt.Sprintf("%s_%s.json.damaged", strings.TrimSuffix(name, ".json"), now().UTC().Format("20060102_150405"))
	return atomicfile.WriteFile(filepath.Join(bdir, file), data, 0o644)
}

// latestBackup returns the path of the newest backup of file (a name such
// as "secondary_a.json") under root, for restoring a damaged checkpoint. It
// fails with an error wrapping fs.ErrNotExist when there is none.
func latestBackup(root, file string) (string, error) {
	if err := checkFileName(file); err != nil {
		return "", err
	}
	bdir := filepath.Join(root, Dir, BackupDir)
	list, err := backups(bdir, strings.TrimSuffix(file, ".json"))
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", fmt.Errorf("no backup of %s in %s: %w", file, bdir, fs.ErrNotExist)
	}
	return filepath.Join(bdir, list[len(list)-1].name), nil
}

// ArchiveName returns the name agent-checkpoints (seed 002) gives a checkpoint file it archives
// on takeover or restart: "agent_checkpoints/secondary_a.json", "crashed" →
// "agent_checkpoints/secondary_a_crashed_<unix seconds>.json" (reason
// "aborted" for a restart from scratch). The directory of file is kept; a
// reason is reduced to lower-case letters, digits and '_' ("archived" when
// nothing is left).
func ArchiveName(file, reason string, at time.Time) string {
	dir, base := filepath.Split(file)
	stem := strings.TrimSuffix(base, ".json")
	var r strings.Builder
	for _, ch := range strings.ToLower(reason) {
		switch {
		case ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9':
			r.WriteRune(ch)
		case r.Len() > 0 && !strings.HasSuffix(r.String(), "_"):
			r.WriteByte('_')
		}
	}
	word := strings.TrimSuffix(r.String(), "_")
	if word == "" {
		word = "archived"
	}
	return dir + stem + "_" + word + "_" + strconv.FormatInt(at.Unix(), 10) + ".json"
}
