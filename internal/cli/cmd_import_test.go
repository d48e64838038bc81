package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
)

// The real fixtures are kept in the end-to-end script that imports them;
// these tests read them from there.
const fixturesArchive = "../../cmd/ckpt/testdata/script/protocols_fixtures.txtar"

// fixtureFiles returns the fixture files of the script archive whose names
// start with prefix, by name.
func fixtureFiles(t *testing.T, prefix string) map[string][]byte {
	t.Helper()
	a, err := txtar.ParseFile(fixturesArchive)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range a.Files {
		if strings.HasPrefix(f.Name, prefix) {
			out[f.Name] = f.Data
		}
	}
	if len(out) == 0 {
		t.Fatalf("no fixtures under %s in %s", prefix, fixturesArchive)
	}
	return out
}

// importEnv runs import and export against a memstore, with files in a
// temporary working directory.
type importEnv struct {
	t      *testing.T
	dir    string
	store  *memstore.Store
	now    time.Time
	out    bytes.Buffer
	errOut bytes.Buffer
}

func newImportEnv(t *testing.T) *importEnv {
	env := &importEnv{t: t, dir: t.TempDir(), store: memstore.New(), now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	env.store.SetClock(func() time.Time { return env.now })
	return env
}

func (env *importEnv) common() common {
	env.out.Reset()
	env.errOut.Reset()
	return common{
		IO:    cmdutil.IOStreams{In: strings.NewReader(""), Out: &env.out, ErrOut: &env.errOut},
		Now:   func() time.Time { return env.now },
		Store: func() (ckpt.Store, error) { return unclosedStore{env.store}, nil },
	}
}

// unclosedStore keeps the memstore usable across commands (Close is a no-op
// there too, but the intent is stated).
type unclosedStore struct{ ckpt.Store }

func (unclosedStore) Close() error { return nil }

func (env *importEnv) write(name string, data []byte) string {
	env.t.Helper()
	p := filepath.Join(env.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		env.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		env.t.Fatal(err)
	}
	return name
}

func (env *importEnv) importFiles(format, id string, paths ...string) error {
	o := &ImportOptions{writeOptions: writeOptions{common: env.common()}, WorkDir: env.dir, Format: format, Paths: paths, ID: id}
	return runImport(context.Background(), o)
}

func (env *importEnv) export(format, id string) []byte {
	env.t.Helper()
	o := &ExportOptions{common: env.common(), WorkDir: env.dir, Format: format, ID: id}
	if err := runExport(context.Background(), o); err != nil {
		env.t.Fatalf("export %s %s: %v", format, id, err)
	}
	return bytes.Clone(env.out.Bytes())
}

func jsonValue(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return v
}

// TestImportExportReproducesRealFiles: a real JSON file imported through
// ckpt import and exported with ckpt export gives back every field.
func TestImportExportReproducesRealFiles(t *testing.T) {
	cases := []struct{ format, file string }{
		{"superpowers", "fixtures/000-superpowers/configurable-models_20260706.metadata.new.json"},
		{"superpowers", "fixtures/000-superpowers/configurable-models_20260706.metadata.in_progress.json"},
		{"superpowers", "fixtures/000-superpowers/configurable-models_20260706.metadata.complete.json"},
		{"superpowers", "fixtures/000-superpowers/jetbridge.too_many_check_pods_20260211.metadata.json"},
		{"agent-checkpoints", "fixtures/002-parallel-agents/KAI-7.secondary_a.json"},
		{"agent-checkpoints", "fixtures/002-parallel-agents/KAI-7.secondary_d.json"},
		{"agent-checkpoints", "fixtures/002-parallel-agents/KAI-7.secondary_g.json"},
		{"agent-checkpoints", "fixtures/002-parallel-agents/KAI-7.secondary-h.json"},
		{"agent-checkpoints", "fixtures/002-parallel-agents/KAI-7.secondary-a-1769654893.json"},
	}
	files := fixtureFiles(t, "fixtures/")
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			env := newImportEnv(t)
			data := files[tc.file]
			if data == nil {
				t.Fatalf("fixture %s missing", tc.file)
			}
			if err := env.importFiles(tc.format, "x", env.write("in.json", data)); err != nil {
				t.Fatalf("import: %v\n%s", err, env.errOut.String())
			}
			got := env.export(tc.format, "x")
			if d := cmp.Diff(jsonValue(t, data), jsonValue(t, got)); d != "" {
				t.Errorf("export of the import differs from the file (-file +export):\n%s", d)
			}
		})
	}
}

// stateView is what export → import must reproduce of a state.
type stateView struct {
	Status      ckpt.Status
	Title, Task string
	Stage       string
	Current     string
	Steps       []string
	Progress    [2]int
	Files       ckpt.Files
	Resumable   bool
	Next        []string
	Cycles      ckpt.Cycles
	Blockers    []string
	Agent       string
}

func viewOf(c *ckpt.Checkpoint) stateView {
	v := stateView{Status: c.Status, Title: c.Title, Task: c.TaskID, Stage: c.Stage, Current: c.CurrentStep,
		Progress: [2]int{c.Progress.Done, c.Progress.Total}, Files: c.Files, Resumable: c.Resume.Resumable,
		Next: c.Resume.NextSteps, Cycles: c.Cycles, Agent: c.Agent.ID}
	for _, s := range c.Steps {
		v.Steps = append(v.Steps, s.ID+"="+string(s.Status))
	}
	for _, b := range c.ActiveBlockers() {
		v.Blockers = append(v.Blockers, b.Text)
	}
	return v
}

// TestExportImportReproducesTheState: a checkpoint recorded with ckpt,
// exported in each JSON format and imported back, is the same work.
func TestExportImportReproducesTheState(t *testing.T) {
	for _, format := range []string{"superpowers", "agent-checkpoints", "sitebuilder"} {
		t.Run(format, func(t *testing.T) {
			env := newImportEnv(t)
			ctx := context.Background()
			appendAll(t, env.store, "w/T060",
				ckpt.MustEvent(ckpt.EventCreated, env.now, ckpt.Actor{}, ckpt.Created{
					Patch: ckpt.Patch{Title: ptr("Convert PDFs"), TaskID: ptr("T060"), Stage: ptr("S2.P2"), Agent: &ckpt.Agent{ID: "migration"},
						FilesCreated: []string{"out/a.md"}, FilesModified: []string{"MANIFEST.json"}, MaxCycles: ptr(3),
						NextSteps: &[]string{"Convert post-03"}},
					Steps: []ckpt.Step{{ID: "post-01"}, {ID: "post-02"}, {ID: "post-03"}},
				}),
				ckpt.MustEvent(ckpt.EventStep, env.now, ckpt.Actor{}, ckpt.StepChange{ID: "post-01", Status: ckpt.StepDone}),
				ckpt.MustEvent(ckpt.EventStep, env.now, ckpt.Actor{}, ckpt.StepChange{ID: "post-02", Status: ckpt.StepInProgress}),
				ckpt.MustEvent(ckpt.EventCycle, env.now, ckpt.Actor{}, ckpt.CycleChange{}),
			)
			want, _ := env.store.Get(ctx, "w/T060", 0)
			data := env.export(format, "w/T060")
			if err := env.importFiles(format, "copy", env.write("exported", data)); err != nil {
				t.Fatalf("import of the export: %v\n%s", err, env.errOut.String())
			}
			got, _ := env.store.Get(ctx, "copy", 0)
			wv, gv := viewOf(want), viewOf(got)
			// Each format carries what its document has a place for.
			switch format {
			case "superpowers":
				// The loop's steps and cycles; files only as step outputs.
				wv.Stage, wv.Files, wv.Next, wv.Agent = "", ckpt.Files{}, nil, ""
			case "agent-checkpoints":
				// Done steps (completed_steps), next steps, modified files.
				wv.Title, wv.Cycles, gv.Cycles = "", ckpt.Cycles{}, ckpt.Cycles{}
				wv.Steps, wv.Progress = []string{"post-01=done"}, [2]int{1, 1}
				wv.Files = ckpt.Files{Modified: []string{"MANIFEST.json", "out/a.md"}}
			case "sitebuilder":
				wv.Stage, wv.Next, wv.Cycles, gv.Cycles = "", nil, ckpt.Cycles{}, ckpt.Cycles{}
				wv.Current, gv.Current = "", ""
			}
			if d := cmp.Diff(wv, gv); d != "" {
				t.Errorf("state after export and import differs (-recorded +reimported):\n%s\nexported:\n%s", d, data)
			}
		})
	}
}

func TestImportReportsWhatItCouldNotRead(t *testing.T) {
	env := newImportEnv(t)
	good := env.write("progress.md", []byte("# Session Progress\n\n**Issue:** CIA-7 — Parser\n\n## Current Task\n- Write it — in progress\n"))
	empty := env.write("empty.md", nil)
	err := env.importFiles("ccc", "", good, empty, "missing.md")
	if err != nil {
		t.Fatalf("one readable file should be enough: %v", err)
	}
	if !strings.HasPrefix(env.out.String(), "imported progress.md as CIA-7  rev 1  created") {
		t.Errorf("stdout %q", env.out.String())
	}
	for _, want := range []string{"ckpt: warning: empty.md not imported: invalid input: ", "ckpt: warning: missing.md not imported: open "} {
		if !strings.Contains(env.errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, env.errOut.String())
		}
	}
	// Nothing readable: exit 2, with advice.
	err = env.importFiles("ccc", "", empty, "missing.md")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "check that the files are ccc files") {
		t.Errorf("error %v (exit %d)", err, ExitCode(err))
	}
	// --id with two files is a usage error; nothing is written.
	err = env.importFiles("ccc", "one", good, good)
	if ExitCode(err) != ExitUsage {
		t.Errorf("--id with two files: %v", err)
	}
	if _, err := env.store.Get(context.Background(), "one", 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("checkpoint written by a refused import: %v", err)
	}
}

func TestImportKeepsTheFilesTime(t *testing.T) {
	env := newImportEnv(t)
	file := env.write("agent_checkpoints/secondary_a.json", []byte(`{"agent_id":"Secondary-A","status":"IN_PROGRESS","last_checkpoint":"2026-11-30T10:00:00Z"}`))
	if err := env.importFiles("agent-checkpoints", "a", file); err != nil {
		t.Fatal(err)
	}
	c, _ := env.store.Get(context.Background(), "a", 0)
	// The agent went quiet before the import: it still looks quiet.
	if want := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC); !c.UpdatedAt.Equal(want) || !c.LastSeen().Equal(want) {
		t.Errorf("updated %s, last seen %s, want the file's %s", c.UpdatedAt, c.LastSeen(), want)
	}
	// The event is dated when it was recorded.
	hist, _ := env.store.History(context.Background(), "a", 1, 0)
	if len(hist) != 1 || !hist[0].At.Equal(env.now) {
		t.Errorf("history %+v", hist)
	}
}

func TestImportStatusMarkdownRows(t *testing.T) {
	env := newImportEnv(t)
	md := "# Orchestration Status\n\n## Active Checkpoints\n\n| Agent | Task | Progress | Last Update | Status |\n|---|---|---|---|---|\n| Migration (Riley) | T060 | 65% | 2 min ago | in_progress |\n| Migration (Riley) | T060 | 10% | — | blocked |\n| content | — | — | — | not started |\n"
	if err := env.importFiles("sitebuilder", "", env.write("STATUS.md", []byte(md))); err != nil {
		t.Fatalf("%v\n%s", err, env.errOut.String())
	}
	ctx := context.Background()
	c, err := env.store.Get(ctx, "migration-t060", 0)
	if err != nil || c.Agent.ID != "migration" || c.Agent.Name != "Riley" || c.Progress.Percent != 65 || c.Status != ckpt.StatusInProgress || c.Heartbeat.Interval.D() != sitebuilder.DefaultInterval {
		t.Errorf("row 1: %v %+v", err, c)
	}
	if c, err := env.store.Get(ctx, "migration-t060-2", 0); err != nil || c.Status != ckpt.StatusBlocked {
		t.Errorf("row 2 (same agent and task): %v %+v", err, c)
	}
	if c, err := env.store.Get(ctx, "content", 0); err != nil || c.Status != ckpt.StatusPending || c.Progress.Total != 0 {
		t.Errorf("row 3: %v %+v", err, c)
	}
	if !strings.Contains(env.errOut.String(), `STATUS.md row "Migration": only agent, task, progress and status are known`) {
		t.Errorf("stderr:\n%s", env.errOut.String())
	}
}

func TestImportJSONOutput(t *testing.T) {
	env := newImportEnv(t)
	file := env.write("plans/p1/plan.md", []byte("# P\n\n- [x] A <!-- TASK: a -->\n- [ ] B <!-- TASK: b -->\n"))
	o := &ImportOptions{writeOptions: writeOptions{common: env.common(), JSON: true}, WorkDir: env.dir, Format: "plan", Paths: []string{file, "nope.md"}}
	if err := runImport(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var got []mirror.ImportResult
	if err := json.Unmarshal(env.out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, env.out.String())
	}
	if len(got) != 2 || got[0].ID != "p1" || got[0].Rev != 1 || !got[0].Created || len(got[0].Warnings) == 0 || got[0].Error != "" ||
		got[1].Path != "nope.md" || got[1].Error == "" || got[1].Warnings == nil {
		t.Errorf("%+v", got)
	}
}
