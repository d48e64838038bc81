package ccc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
	"github.com/google/go-cmp/cmp"
)

func TestImportGolden(t *testing.T) { adaptertest.ImportGolden(t, New()) }

func TestImportProgressReadsEverySection(t *testing.T) {
	c, w := adaptertest.ImportFile(t, New(), "testdata/seed/session.ccc-progress.md")
	if c.ID != "CIA-142" || c.TaskID != "CIA-142" || c.Title != "Add retry budget to the sync worker" ||
		!c.Session.StartedAt.Equal(time.Date(2026, 3, 2, 10, 15, 0, 0, time.UTC)) || !slices.Equal(c.Labels, []string{"exec:tdd"}) {
		t.Errorf("header: %+v", c)
	}
	var steps []string
	for _, s := range c.Steps {
		steps = append(steps, s.Title+"|"+string(s.Status)+"|"+s.Notes)
	}
	want := []string{"Write failing test for retry budget|done|", "Implement budget counter|done|",
		"Wire budget into worker loop|in_progress|tests red, fixing off-by-one", "Update docs|pending|", "Add metrics|pending|"}
	if !slices.Equal(steps, want) {
		t.Errorf("steps %q", steps)
	}
	if c.CurrentStep != "Wire budget into worker loop" || c.Progress != (ckpt.Progress{Done: 2, Total: 5, Percent: 40}) {
		t.Errorf("current %q progress %+v", c.CurrentStep, c.Progress)
	}
	if len(c.Decisions) != 1 || c.Decisions[0].Text != "Budget per worker, not global" || c.Decisions[0].Reason != "avoids cross-worker contention" {
		t.Errorf("decisions %+v", c.Decisions)
	}
	if c.Status != ckpt.StatusBlocked || len(c.Blockers) != 1 || c.Blockers[0].Text != "Staging DB unavailable (unblocked by: ops ticket OPS-77)" {
		t.Errorf("status %s blockers %+v", c.Status, c.Blockers)
	}
	if !strings.HasSuffix(c.Resume.Instructions, "go test ./worker/...\n```") {
		t.Errorf("prompt %q", c.Resume.Instructions)
	}
	for _, part := range []string{"Notes", "no status line", "decisions carry no time"} {
		if !adaptertest.HasWarning(w, part) {
			t.Errorf("warnings lack %q: %q", part, w)
		}
	}
}

func TestImportStateReadsTheLoop(t *testing.T) {
	c, w := adaptertest.ImportFile(t, New(), "testdata/seed/hook.ccc-state.json")
	if c.ID != "CIA-142" || c.Phase != "execution" || c.Progress != (ckpt.Progress{Done: 2, Total: 5, Percent: 40}) ||
		c.Cycles != (ckpt.Cycles{Count: 1, Max: 5}) || !slices.Equal(c.Labels, []string{"exec:tdd"}) ||
		!slices.Equal(c.Files.Modified, []string{"worker/sync.go", "worker/budget.go"}) || c.Status != ckpt.StatusInProgress ||
		!c.UpdatedAt.Equal(time.Date(2026, 3, 2, 11, 40, 0, 0, time.UTC)) {
		t.Errorf("state: %+v", c)
	}
	if !adaptertest.HasWarning(w, "no status") {
		t.Errorf("warnings %q", w)
	}
	m, err := getMeta(c)
	if err != nil || !strings.Contains(string(m.State), `"checkpointCommentId": "0f6c1b9e`) && !strings.Contains(string(m.State), `"checkpointCommentId":"0f6c1b9e`) {
		t.Errorf("state kept in meta: %s %v", m.State, err)
	}
	gated := `{"linearIssue":"CIA-9","phase":"review","awaitingGate":2}`
	im, err := New().Import(".ccc-state.json", []byte(gated))
	if err != nil || im.State.Status != ckpt.StatusWaiting || im.State.StatusReason != "awaiting gate 2" {
		t.Errorf("gate: %+v %v", im.State, err)
	}
}

func TestImportRefusesWhatIsNeither(t *testing.T) {
	_, err := New().Import("hooks/hooks.json", adaptertest.ReadFile(t, "testdata/fixtures/ccc.hooks.json"))
	if err == nil || !strings.Contains(err.Error(), "only hooks") || !strings.Contains(err.Error(), ".ccc-state.json") {
		t.Errorf("hooks.json: %v", err)
	}
	for name, in := range map[string]string{"empty": " ", "prose": "just text\n", "broken": `{"phase": `} {
		if _, err := New().Import(name, []byte(in)); err == nil {
			t.Errorf("%s: imported", name)
		}
	}
}

// TestRoundTripImportExport: exporting an imported progress file writes
// every header field, item, extra section and the prompt back.
func TestRoundTripImportExport(t *testing.T) {
	adaptertest.EachInput(t, ".md", func(t *testing.T, path string, data []byte) {
		c, _ := adaptertest.ImportFile(t, New(), path)
		out := adaptertest.Export(t, New(), c)
		in, exp := parseProgress(data), parseProgress(out)
		sortFields := cmp.Transformer("sort", func(f []field) []field {
			s := slices.Clone(f)
			slices.SortFunc(s, func(a, b field) int { return strings.Compare(a.Label, b.Label) })
			return s
		})
		if diff := cmp.Diff(in, exp, cmp.AllowUnexported(progress{}), sortFields); diff != "" {
			t.Errorf("export differs from the input (-input +export):\n%s\n%s", diff, out)
		}
		if path == "testdata/seed/session.ccc-progress.md" && string(out) != string(data) {
			t.Errorf("a file in the seed's layout is not written back byte for byte:\n%s", out)
		}
		// Through a store: the snapshot folded as an imported event.
		s := adaptertest.Stored(t, c.ID, c, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
		if out2 := adaptertest.Export(t, New(), s); string(out2) != string(out) {
			t.Errorf("the stored state exports differently:\n%s", out2)
		}
	})
}

func native(t testing.TB) *ckpt.Checkpoint {
	t0 := time.Date(2026, 3, 2, 10, 15, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	return adaptertest.Fold(t, "CIA-142",
		adaptertest.Event(ckpt.EventCreated, at(0), ckpt.Created{
			Patch:   ckpt.Patch{TaskID: adaptertest.Ptr("CIA-142"), Title: adaptertest.Ptr("Add retry budget"), AddLabels: []string{"exec:tdd", "team:sync"}},
			Session: ckpt.Session{ID: "s1", StartedAt: t0},
			Steps:   []ckpt.Step{{ID: "t1", Title: "Write failing test"}, {ID: "t2", Title: "Implement counter"}, {ID: "t3", Title: "Wire into loop"}, {ID: "t4", Title: "Docs"}},
		}),
		adaptertest.Event(ckpt.EventStep, at(5), ckpt.StepChange{ID: "t1", Status: ckpt.StepDone}),
		adaptertest.Event(ckpt.EventStep, at(9), ckpt.StepChange{ID: "t2", Status: ckpt.StepFailed, Notes: "counter overflows"}),
		adaptertest.Event(ckpt.EventStep, at(10), ckpt.StepChange{ID: "t3", Status: ckpt.StepInProgress, Notes: "tests red"}),
		adaptertest.Event(ckpt.EventDecision, at(11), ckpt.DecisionData{Text: "Budget per worker", Reason: "no contention"}),
		adaptertest.Event(ckpt.EventDecision, at(12), ckpt.DecisionData{Text: "No config flag"}),
		adaptertest.Event(ckpt.EventBlocker, at(13), ckpt.BlockerChange{Text: "Staging DB unavailable"}),
		adaptertest.Event(ckpt.EventUpdate, at(14), ckpt.Patch{FilesModified: []string{"worker/sync.go"}, NextSteps: &[]string{"Fix the off-by-one"}}),
	)
}

// carried keeps the fields .ccc-progress.md carries.
func carried(c *ckpt.Checkpoint) *ckpt.Checkpoint {
	out := &ckpt.Checkpoint{TaskID: c.TaskID, Title: c.Title, Session: ckpt.Session{StartedAt: c.Session.StartedAt},
		Resume: ckpt.Resume{Resumable: true}}
	if m := executionMode(c); m != "" {
		out.Labels = []string{m}
	}
	ids := jsondoc.StepIDs{}
	order := map[ckpt.StepStatus]int{ckpt.StepDone: 0, ckpt.StepSkipped: 0, ckpt.StepInProgress: 1, ckpt.StepFailed: 1, ckpt.StepPending: 2}
	steps := slices.Clone(c.Steps)
	slices.SortStableFunc(steps, func(a, b ckpt.Step) int { return order[a.Status] - order[b.Status] })
	for _, s := range steps { // grouped by section, as the file lists them
		st := ckpt.Step{ID: ids.Make(s.Label()), Title: s.Label(), Status: s.Status}
		if s.Status == ckpt.StepInProgress || s.Status == ckpt.StepFailed {
			st.Notes = s.Notes
		}
		out.Steps = append(out.Steps, st)
		if out.CurrentStep == "" && s.Status == ckpt.StepInProgress {
			out.CurrentStep = s.Label()
		}
	}
	for _, d := range c.Decisions {
		out.Decisions = append(out.Decisions, ckpt.Decision{Text: d.Text, Reason: d.Reason})
	}
	for i, b := range c.ActiveBlockers() {
		out.Blockers = append(out.Blockers, ckpt.Blocker{ID: fmt.Sprintf("b%d", i+1), Text: b.Text})
	}
	out.Status = c.Status
	ckpt.Derive(out)
	// The prompt is carried as resume instructions, unless the sections
	// alone regenerate it.
	if p := prompt(c); p != generatedPrompt(out) {
		out.Resume.Instructions = p
	}
	return out
}

func TestRoundTripExportImport(t *testing.T) {
	c := native(t)
	out, im := adaptertest.ExportImport(t, New(), c, ProgressFile)
	got := im.State.Clone()
	got.ID = ""
	if diff := cmp.Diff(carried(c), got); diff != "" {
		t.Errorf("import of the export differs (-state +reimported):\n%s\n%s", diff, out)
	}
	// Every imported progress file: import → export → import gives the same state.
	for _, path := range adaptertest.Inputs(t) {
		if filepath.Ext(path) != ".md" {
			continue
		}
		first, _ := adaptertest.ImportFile(t, New(), path)
		_, second := adaptertest.ExportImport(t, New(), first, path)
		if diff := cmp.Diff(first, second.State); diff != "" {
			t.Errorf("%s: import → export → import changed the state (-first +second):\n%s", path, diff)
		}
	}
}

func TestGeneratedContinuationPrompt(t *testing.T) {
	out := adaptertest.Export(t, New(), native(t))
	p, err := ContinuationPrompt(out)
	if err != nil {
		t.Fatal(err)
	}
	// The current task is the step in progress (ckpt's one rule,
	// (*Checkpoint).Position), not the failed one before it.
	want := "Resume CIA-142. Current task: Wire into loop (task 3 of 4). Key files: worker/sync.go.\nNext action: Fix the off-by-one."
	if p != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", p, want)
	}
}

func TestContinuationPrompt(t *testing.T) {
	p, err := ContinuationPrompt(adaptertest.ReadFile(t, "testdata/seed/session.ccc-progress.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p, "Resume CIA-142.") || !strings.Contains(p, "## not a heading") || strings.Contains(p, "Notes") {
		t.Errorf("prompt %q", p)
	}
	lenient := "# Session Progress\n\n### continuation prompt:\n\nPick up at step 4.\n\n## Later\nnot part of it\n"
	if p, err := ContinuationPrompt([]byte(lenient)); err != nil || p != "Pick up at step 4." {
		t.Errorf("lenient heading: %q %v", p, err)
	}
	if _, err := ContinuationPrompt([]byte("# Session Progress\n\n## Current Task\n- x\n")); err == nil || !strings.Contains(err.Error(), "no \"## Continuation Prompt\"") {
		t.Errorf("missing section: %v", err)
	}
	if _, err := ContinuationPrompt([]byte("## Continuation Prompt\n\n\n## Blockers\n")); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty section: %v", err)
	}
}

func TestMirrorWritesTheProgressFile(t *testing.T) {
	root := t.TempDir()
	c := native(t)
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	want, _ := New().Export(c)
	if got := adaptertest.ReadFile(t, filepath.Join(root, ProgressFile)); string(got) != string(want) {
		t.Errorf("mirror:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(root, StateFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Mirror must leave the stop hook's state file alone: %v", err)
	}
	// The document's Step 1 file: its lines in its order.
	at := -1
	for _, line := range []string{"# Session Progress", "**Issue:** ", "**Session:** ", "**Execution Mode:** ", "## Completed Tasks",
		"## Current Task", "## Remaining Tasks", "## Decisions Made", "## Blockers", "## Continuation Prompt"} {
		i := strings.Index(string(want), "\n"+line)
		if strings.HasPrefix(string(want), line) {
			i = 0
		}
		if i <= at {
			t.Errorf("%q missing or out of the document's order:\n%s", line, want)
		}
		at = i
	}
}

// TestMirrorTakesTheIssueKeyFromTheState: a checkpoint started without
// --task gets the **Issue:** key its project's .ccc-state.json names, in
// the progress file and its continuation prompt.
func TestMirrorTakesTheIssueKeyFromTheState(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, StateFile), []byte(`{"linearIssue": "CIA-42", "phase": "execution"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &ckpt.Checkpoint{ID: "session-1", Title: "CSV import", Status: ckpt.StatusInProgress}
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, ProgressFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "**Issue:** CIA-42 — CSV import\n") || !strings.Contains(string(data), "Resume CIA-42.") {
		t.Errorf("the issue key of .ccc-state.json is not used:\n%s", data)
	}
	if c.TaskID != "" {
		t.Errorf("Mirror changed the checkpoint: task %q", c.TaskID)
	}
}
