package agentcheckpoints

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// clock is a fake time source that moves on by step on each call.
type clock struct {
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time { t := c.t; c.t = c.t.Add(c.step); return t }

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// states returns n successive versions of c, each with another current step.
func states(c *ckpt.Checkpoint, n int) []*ckpt.Checkpoint {
	var out []*ckpt.Checkpoint
	for i := 0; i < n; i++ {
		s := c.Clone()
		s.CurrentStep = fmt.Sprintf("step %d", i)
		out = append(out, s)
	}
	return out
}

func TestMirrorWritesTheFileAndKeepsTheLastTenBackups(t *testing.T) {
	root := t.TempDir()
	clk := &clock{t: time.Date(2026, 1, 29, 15, 0, 0, 0, time.UTC), step: time.Minute}
	f := &Format{Keep: 10, Now: clk.now}
	versions := states(native(t), 13)
	var exports [][]byte
	for _, s := range versions {
		if err := f.Mirror(root, s); err != nil {
			t.Fatal(err)
		}
		out := adaptertest.Export(t, f, s)
		exports = append(exports, out)
	}
	path := filepath.Join(root, Dir, "secondary_a.json")
	if got := adaptertest.ReadFile(t, path); string(got) != string(exports[12]) {
		t.Errorf("the file is not the last export:\n%s", got)
	}
	bdir := filepath.Join(root, Dir, BackupDir)
	names := listDir(t, bdir)
	if len(names) != 10 {
		t.Fatalf("%d backups, want 10: %v", len(names), names)
	}
	re := regexp.MustCompile(`^secondary_a_\d{8}_\d{6}\.json$`)
	for i, name := range names {
		if !re.MatchString(name) {
			t.Errorf("backup name %q is not seed 002's <name>_YYYYMMDD_HHMMSS.json", name)
		}
		// The backups hold versions 2…11: the ten before the current one.
		if got := adaptertest.ReadFile(t, filepath.Join(bdir, name)); string(got) != string(exports[i+2]) {
			t.Errorf("backup %s holds the wrong version", name)
		}
	}
	latest, err := latestBackup(root, "secondary_a.json")
	if err != nil || string(adaptertest.ReadFile(t, latest)) != string(exports[11]) {
		t.Errorf("LatestBackup = %s, %v", latest, err)
	}
	// The same content again: nothing to back up.
	if err := f.Mirror(root, versions[12]); err != nil {
		t.Fatal(err)
	}
	if after := listDir(t, bdir); !slices.Equal(after, names) {
		t.Errorf("an unchanged mirror rotated the backups: %v", after)
	}
}

func TestBackupsWithinOneSecondAndOtherFilesAreKept(t *testing.T) {
	root := t.TempDir()
	bdir := filepath.Join(root, Dir, BackupDir)
	if err := os.MkdirAll(bdir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Backups of another agent whose name starts alike, and a note: not ours.
	others := []string{"secondary_ab_20200101_000000.json", "secondary_a_notes.txt", "secondary_a_2020.json"}
	for _, n := range others {
		if err := os.WriteFile(filepath.Join(bdir, n), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	clk := &clock{t: time.Date(2026, 1, 29, 15, 0, 0, 0, time.UTC)} // the clock stands still
	f := &Format{Keep: 3, Now: clk.now}
	versions := states(native(t), 6)
	for _, s := range versions {
		if err := f.Mirror(root, s); err != nil {
			t.Fatal(err)
		}
	}
	got := listDir(t, bdir)
	want := append([]string{"secondary_a_20260129_150000_3.json", "secondary_a_20260129_150000_4.json", "secondary_a_20260129_150000_5.json"}, others...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("backups %v, want %v", got, want)
	}
	latest, _ := latestBackup(root, "secondary_a.json")
	if out, _ := f.Export(versions[4]); string(adaptertest.ReadFile(t, latest)) != string(out) {
		t.Errorf("the latest backup is not the version before the current one")
	}
}

func TestLatestBackupWithNone(t *testing.T) {
	if _, err := latestBackup(t.TempDir(), "secondary_a.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no backups: %v", err)
	}
	if _, err := latestBackup(t.TempDir(), "../x.json"); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("bad name: %v", err)
	}
}

func TestFileName(t *testing.T) {
	im, err := New().Import("feature-updates/KAI-7/agent_checkpoints/secondary-h.json", adaptertest.ReadFile(t, "testdata/fixtures/KAI-7.secondary-h.json"))
	if err != nil {
		t.Fatal(err)
	}
	im.State.ID = "kai-7/whatever"
	if name, err := FileName(im.State); name != "secondary-h.json" || err != nil {
		t.Errorf("imported file: %q %v", name, err)
	}
	im, _ = New().Import("agent_checkpoints/secondary_b_checkpoint.md", adaptertest.ReadFile(t, "testdata/fixtures/KAI-8.secondary_b_checkpoint.misplaced.md"))
	if name, _ := FileName(im.State); name != "secondary_b.json" || im.ID != "secondary_b" {
		t.Errorf("Markdown variant: file %q, ID %q", name, im.ID)
	}
	c := native(t)
	if name, err := FileName(c); name != "secondary_a.json" || err != nil {
		t.Errorf("native: %q %v", name, err)
	}
	jsondoc.WriteMeta(c, Name, jsondoc.MetaSource{File: "../../etc/passwd.json"})
	if _, err := FileName(c); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("a file name from meta that leaves the folder: %v", err)
	}
	if err := New().Mirror(t.TempDir(), c); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Mirror with that name: %v", err)
	}
}

func TestArchiveName(t *testing.T) {
	at := time.Unix(1769654893, 0)
	for _, tc := range []struct{ file, reason, want string }{
		{"agent_checkpoints/secondary_a.json", "crashed", "agent_checkpoints/secondary_a_crashed_1769654893.json"},
		{"secondary_a.json", "aborted", "secondary_a_aborted_1769654893.json"},
		{"secondary_a.json", "Crashed (tab closed)!", "secondary_a_crashed_tab_closed_1769654893.json"},
		{"secondary_a.json", "", "secondary_a_archived_1769654893.json"},
	} {
		if got := ArchiveName(tc.file, tc.reason, at); got != tc.want {
			t.Errorf("ArchiveName(%q, %q) = %q, want %q", tc.file, tc.reason, got, tc.want)
		}
	}
}

// A damaged checkpoint file is kept, but never as the newest backup: the
// document's restore (the newest backups/*.json) must restore valid JSON.
func TestDamagedFileIsNeverTheNewestBackup(t *testing.T) {
	root := t.TempDir()
	clk := &clock{t: time.Date(2026, 1, 29, 15, 0, 0, 0, time.UTC), step: time.Minute}
	f := &Format{Keep: 10, Now: clk.now}
	versions := states(native(t), 2)
	if err := f.Mirror(root, versions[0]); err != nil {
		t.Fatal(err)
	}
	if err := f.Mirror(root, versions[1]); err != nil {
		t.Fatal(err)
	}
	name, _ := FileName(versions[0])
	path := filepath.Join(root, Dir, name)
	if err := os.WriteFile(path, []byte("{ not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Mirror(root, versions[0]); err != nil {
		t.Fatal(err)
	}
	latest, err := latestBackup(root, name)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(latest)
	if !json.Valid(data) {
		t.Errorf("the newest backup %s is the damaged file:\n%s", latest, data)
	}
	var damaged []string
	for _, n := range listDir(t, filepath.Join(root, Dir, BackupDir)) {
		if strings.HasSuffix(n, ".json.damaged") {
			damaged = append(damaged, n)
		}
	}
	if len(damaged) != 1 {
		t.Fatalf("damaged copies %v", damaged)
	}
	if data, _ := os.ReadFile(filepath.Join(root, Dir, BackupDir, damaged[0])); string(data) != "{ not json" {
		t.Errorf("the damaged content was not kept: %q", data)
	}
}

// A checkpoint started with ckpt (not imported) is written with a session
// id in the document's "<agent>-<unix time>" form and a coordination block.
func TestNativeCheckpointHasASessionIDAndCoordinationState(t *testing.T) {
	start := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	c := adaptertest.Fold(t, "kai-7/b", adaptertest.Event(ckpt.EventCreated, start, ckpt.Created{Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "Secondary-B"}}}))
	out, err := New().Export(c)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SessionID string `json:"session_id"`
		Coord     struct {
			Unread     *int   `json:"unread_messages"`
			LastStatus string `json:"last_status_update"`
		} `json:"coordination_state"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SessionID != "secondary-b-1768487400" || doc.Coord.Unread == nil || doc.Coord.LastStatus != "2026-01-15T14:30:00Z" {
		t.Errorf("export:\n%s", out)
	}
}
