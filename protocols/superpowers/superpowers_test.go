package superpowers

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
	"github.com/google/go-cmp/cmp"
)

func TestImportGolden(t *testing.T) { adaptertest.ImportGolden(t, New()) }

// TestImportReadsWhatEachFileSays pins the facts a user relies on, beyond
// the golden files: status words, steps, cycles and the resume point.
func TestImportReadsWhatEachFileSays(t *testing.T) {
	c, _ := adaptertest.ImportFile(t, New(), "testdata/fixtures/configurable-models_20260706.metadata.in_progress.json")
	if c.Status != ckpt.StatusInProgress || c.CurrentStep != "EXECUTE" || c.Title != "Configurable Model Selection" {
		t.Errorf("in_progress track: status %s, current step %q, title %q", c.Status, c.CurrentStep, c.Title)
	}
	ids := []string{}
	for _, s := range c.Steps {
		ids = append(ids, s.ID+":"+string(s.Status))
	}
	if want := []string{"PLAN:done", "EVALUATE_PLAN:done", "EXECUTE:pending"}; !slices.Equal(ids, want) {
		t.Errorf("steps %v, want %v (EXECUTE is NOT_STARTED and has no checkpoint entry yet)", ids, want)
	}
	if c.Progress.Done != 2 || c.Progress.Total != 3 {
		t.Errorf("progress %+v", c.Progress)
	}

	c, _ = adaptertest.ImportFile(t, New(), "testdata/fixtures/configurable-models_20260706.metadata.complete.json")
	if c.Status != ckpt.StatusDone || c.CompletedAt == nil || len(c.Steps) != 4 || c.StepIndex(loopEnd) >= 0 {
		t.Errorf("complete track: status %s, completed %v, steps %d (COMPLETE is not a step)", c.Status, c.CompletedAt, len(c.Steps))
	}

	im, err := New().Import("jetbridge.metadata.json", adaptertest.ReadFile(t, "testdata/fixtures/jetbridge.too_many_check_pods_20260211.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	if im.ID != "too_many_check_pods_20260211" || im.State.Status != ckpt.StatusPending || len(im.State.Steps) != 0 {
		t.Errorf("camelCase metadata: id %q status %s steps %d", im.ID, im.State.Status, len(im.State.Steps))
	}
	if !adaptertest.HasWarning(im.Warnings, `"backlog"`) || !adaptertest.HasWarning(im.Warnings, "without loop_state") {
		t.Errorf("camelCase metadata warnings do not say what was guessed: %q", im.Warnings)
	}
	if want := time.Date(2026, 2, 11, 14, 7, 16, 463e6, time.UTC); !im.State.UpdatedAt.Equal(want) {
		t.Errorf("updatedAt read as %v", im.State.UpdatedAt)
	}

	c, _ = adaptertest.ImportFile(t, New(), "testdata/seed/seed000-loop.json")
	if c.Cycles != (ckpt.Cycles{Count: 1, Max: 3}) {
		t.Errorf("cycles %+v", c.Cycles)
	}
	if got := c.Context.LastProcessed; got != "Task 5: Parse parameter defaults" {
		t.Errorf("the --resume-from point (last_task) = %q", got)
	}
	if c.Context.NextToProcess != "Task 6: Validate nested parameters" {
		t.Errorf("current task %q", c.Context.NextToProcess)
	}
	fix := c.Steps[c.StepIndex("FIX")]
	if fix.Status != ckpt.StepInProgress || len(c.ActiveBlockers()) != 1 || c.ActiveBlockers()[0].ID != "FIX" ||
		!strings.HasPrefix(c.ActiveBlockers()[0].Text, "ERROR: Missing required spec.md") {
		t.Errorf("BLOCKED FIX step: %+v, blockers %+v", fix, c.Blockers)
	}
	plan := c.Steps[c.StepIndex("PLAN")]
	if plan.By != "superpowers:writing-plans" || plan.Output != "conductor/tracks/param-schema_20260213/plan.md" || plan.CompletedAt == nil {
		t.Errorf("PLAN step %+v", plan)
	}
	if !slices.Contains(c.Files.Created, "conductor/designs/2026-02-13-params.md") {
		t.Errorf("output files not in files created: %v", c.Files.Created)
	}
	if want := time.Date(2026, 2, 13, 14, 10, 0, 0, time.UTC); !c.UpdatedAt.Equal(want) {
		t.Errorf("updated at %v, want the latest last_updated %v", c.UpdatedAt, want)
	}
}

func TestImportTracksRegistryExplains(t *testing.T) {
	_, err := New().Import("conductor/tracks.md", adaptertest.ReadFile(t, "testdata/fixtures/tracks.md"))
	if err == nil || !strings.Contains(err.Error(), "configurable-models_20260706, model-fallback_20260715") ||
		!strings.Contains(err.Error(), "metadata.json") {
		t.Fatalf("tracks.md: %v", err)
	}
}

func TestImportPlanTasks(t *testing.T) {
	im, err := New().Import("conductor/tracks/model-fallback_20260715/plan.md", adaptertest.ReadFile(t, "testdata/fixtures/model-fallback_20260715.plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	c := im.State
	if im.ID != "model-fallback_20260715" || len(c.Steps) != 8 || c.Status != ckpt.StatusDone {
		t.Fatalf("plan: id %q, %d steps, status %s", im.ID, len(c.Steps), c.Status)
	}
	if c.Steps[1].ID != "task-2" || c.Steps[1].Phase != "Phase 1: Resolver — probe + force flag (TDD)" {
		t.Errorf("task 2: %+v", c.Steps[1])
	}
	if len(c.Acceptance) != 7 || c.Acceptance[0].Met {
		t.Errorf("acceptance %+v", c.Acceptance)
	}
	if c.Context.LastProcessed != "Task 8: Full regression run" {
		t.Errorf("the --resume-from point (last_task) = %q", c.Context.LastProcessed)
	}
	// Markers inside code fences are not tasks: the plan has "### Task"-like
	// text only in headings, and its fenced bash has none; a fenced heading is
	// ignored.
	fenced := "# P\n\n```\n### Task 9: not a task\n**Status:** [x]\n```\n\n### Task 1: real\n**Status:** [ ]\n"
	im, err = New().Import("x/plan.md", []byte(fenced))
	if err != nil || len(im.State.Steps) != 1 || im.State.Steps[0].Status != ckpt.StepPending {
		t.Fatalf("fenced plan: %v %+v", err, im.State)
	}
}

func TestImportRefusesWhatIsNotATrack(t *testing.T) {
	for name, in := range map[string]string{
		"empty":      "  \n",
		"not json":   "{\"loop_state\": ",
		"array":      "[1,2]",
		"no field":   `{"hooks": {}}`,
		"plain text": "hello",
	} {
		if _, err := New().Import(name, []byte(in)); err == nil {
			t.Errorf("%s: imported", name)
		}
	}
}

// TestRoundTripImportExport: export of an imported file reproduces every
// field of the input, for every JSON input.
func TestRoundTripImportExport(t *testing.T) {
	adaptertest.EachInput(t, ".json", func(t *testing.T, path string, data []byte) {
		c, _ := adaptertest.ImportFile(t, New(), path)
		adaptertest.SameJSON(t, "export", data, adaptertest.Export(t, New(), c))
		// Through a store: the snapshot folded as an imported event.
		s := adaptertest.Stored(t, "track", c, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		adaptertest.SameJSON(t, "export of the stored state", data, adaptertest.Export(t, New(), s))
	})
}

// carried keeps the fields metadata.json carries.
func carried(c *ckpt.Checkpoint) *ckpt.Checkpoint {
	out := &ckpt.Checkpoint{
		TaskID: TrackID(c), Title: c.Title, Status: c.Status, StartedAt: c.StartedAt, CompletedAt: c.CompletedAt,
		UpdatedAt: c.UpdatedAt, CurrentStep: c.CurrentStep, Cycles: c.Cycles, Progress: c.Progress,
		Context: ckpt.Context{LastProcessed: c.Context.LastProcessed, NextToProcess: c.Context.NextToProcess},
		Resume:  ckpt.Resume{Resumable: true},
	}
	for _, s := range c.Steps {
		s.Title, s.Phase = "", ""
		if s.StartedAt == nil && s.Status != ckpt.StepPending {
			s.StartedAt = s.CompletedAt // a step finished unstarted is written as started when it ended
		}
		out.Steps = append(out.Steps, s)
		if s.Output != "" {
			out.Files.Created = addUnique(out.Files.Created, strings.Split(s.Output, "\n"))
		}
	}
	// A blocked step's blocker is carried as the step's BLOCKED status and its
	// text as the step's notes; its start time is not carried.
	for _, b := range c.ActiveBlockers() {
		if i := out.StepIndex(b.ID); i >= 0 {
			out.Blockers = append(out.Blockers, ckpt.Blocker{ID: b.ID, Text: b.Text})
			if out.Steps[i].Notes == "" {
				out.Steps[i].Notes = b.Text
			}
		}
	}
	return out
}

// native is a checkpoint made with ckpt's own events, as an agent using ckpt
// would leave it.
func native(t testing.TB) *ckpt.Checkpoint {
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	return adaptertest.Fold(t, "conductor/param-schema",
		adaptertest.Event(ckpt.EventCreated, at(0), ckpt.Created{
			Patch: ckpt.Patch{Title: adaptertest.Ptr("Parameter schema"), TaskID: adaptertest.Ptr("param-schema_20260301"), MaxCycles: adaptertest.Ptr(3)},
			Steps: []ckpt.Step{{ID: "PLAN"}, {ID: "EVALUATE_PLAN"}, {ID: "EXECUTE"}, {ID: "FIX"}},
		}),
		adaptertest.Event(ckpt.EventStep, at(1), ckpt.StepChange{ID: "PLAN", Status: ckpt.StepInProgress, By: "superpowers:writing-plans"}),
		adaptertest.Event(ckpt.EventStep, at(20), ckpt.StepChange{ID: "PLAN", Status: ckpt.StepDone, Output: "plan.md\nphases.md", Notes: "5 phases"}),
		adaptertest.Event(ckpt.EventStep, at(21), ckpt.StepChange{ID: "EVALUATE_PLAN", Status: ckpt.StepDone, By: "superpowers:evaluate-plan"}),
		adaptertest.Event(ckpt.EventStep, at(22), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress, By: "superpowers:executing-plans"}),
		adaptertest.Event(ckpt.EventUpdate, at(40), ckpt.Patch{LastProcessed: adaptertest.Ptr("Task 3: defaults"), NextToProcess: adaptertest.Ptr("Task 4: nesting")}),
		adaptertest.Event(ckpt.EventCycle, at(41), ckpt.CycleChange{}),
		adaptertest.Event(ckpt.EventStep, at(42), ckpt.StepChange{ID: "FIX", Status: ckpt.StepInProgress, By: "superpowers:systematic-debugging"}),
		adaptertest.Event(ckpt.EventBlocker, at(43), ckpt.BlockerChange{ID: "FIX", Text: "spec.md missing"}),
		adaptertest.Event(ckpt.EventStep, at(44), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress}),
		adaptertest.Event(ckpt.EventUpdate, at(45), ckpt.Patch{CurrentStep: adaptertest.Ptr("EXECUTE")}),
	)
}

// TestRoundTripExportImport: import of an export reproduces the state, for
// every field metadata.json carries.
func TestRoundTripExportImport(t *testing.T) {
	c := native(t)
	out, im := adaptertest.ExportImport(t, New(), c, "metadata.json")
	if diff := cmp.Diff(carried(c), carried(im.State)); diff != "" {
		t.Errorf("import of the export differs (-state +reimported):\n%s\nexport:\n%s", diff, out)
	}
	if len(im.Warnings) != 0 {
		t.Errorf("a file ckpt wrote needs no guess, got %q", im.Warnings)
	}
	// And for every imported input: import → export → import gives the same state.
	adaptertest.CheckReimport(t, New(), ".json") // plan.md exports as metadata.json, another shape
}

// TestExportKeepsUnknownFieldsWhileApplyingChanges: a changed state writes
// its changes and keeps every field ckpt does not model, nested ones too.
func TestExportKeepsUnknownFieldsWhileApplyingChanges(t *testing.T) {
	src := adaptertest.ReadFile(t, "testdata/seed/seed000-loop.json")
	c, _ := adaptertest.ImportFile(t, New(), "testdata/seed/seed000-loop.json")
	at := c.UpdatedAt.Add(time.Hour)
	s := adaptertest.Stored(t, "param-schema", c, at)
	s = adaptertest.Then(t, s,
		adaptertest.Event(ckpt.EventUpdate, at, ckpt.Patch{LastProcessed: adaptertest.Ptr("Task 6: Validate nested parameters"), NextToProcess: adaptertest.Ptr("Task 7: Docs")}),
		adaptertest.Event(ckpt.EventStep, at, ckpt.StepChange{ID: "FIX", Status: ckpt.StepDone}),
		adaptertest.Event(ckpt.EventBlocker, at, ckpt.BlockerChange{ID: "FIX", Clear: true}),
	)
	out := adaptertest.Export(t, New(), s)
	doc := adaptertest.Decoded(t, out).(map[string]any)
	ls := doc["loop_state"].(map[string]any)
	cps := ls["checkpoints"].(map[string]any)
	exec := cps["EXECUTE"].(map[string]any)
	fix := cps["FIX"].(map[string]any)
	if exec["last_task"] != "Task 6: Validate nested parameters" || exec["last_commit"] != "4f2a9c1" {
		t.Errorf("EXECUTE: %v", exec)
	}
	progress := exec["progress"].(map[string]any)
	if progress["current_task"] != "Task 7: Docs" || progress["tasks_total"] != float64(35) || progress["tasks_completed"] != float64(5) {
		t.Errorf("EXECUTE progress: %v", progress)
	}
	if fix["status"] != "PASSED" || fix["issues_total"] != float64(2) || fix["current_issue"] != "spec.md missing" {
		t.Errorf("FIX: %v", fix)
	}
	if doc["created_at"] != "2026-02-13T11:00:00Z" || doc["name"] != "Parameter schema" {
		t.Errorf("track fields: %v", doc)
	}
	if bytes.Equal(out, src) {
		t.Error("export did not change")
	}
}

// A re-started step carries nothing of its failed run (no completion time,
// no notes), and a blocked checkpoint shows its current step as BLOCKED
// with the blocker as its notes, though the blocker names no step.
func TestRestartedAndBlockedSteps(t *testing.T) {
	at := time.Date(2026, 2, 13, 12, 0, 0, 0, time.UTC)
	min := func(m int) time.Time { return at.Add(time.Duration(m) * time.Minute) }
	events := []ckpt.Event{
		adaptertest.Event(ckpt.EventCreated, min(0), ckpt.Created{Steps: []ckpt.Step{{ID: "PLAN"}, {ID: "EXECUTE"}}}),
		adaptertest.Event(ckpt.EventStep, min(1), ckpt.StepChange{ID: "PLAN", Status: ckpt.StepDone}),
		adaptertest.Event(ckpt.EventStep, min(2), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress}),
		adaptertest.Event(ckpt.EventStep, min(3), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepFailed, Notes: "tests red"}),
		adaptertest.Event(ckpt.EventStep, min(4), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress}),
	}
	c := adaptertest.Fold(t, "t1", events...)
	out := string(adaptertest.Export(t, New(), c))
	exec := out[strings.Index(out, `"EXECUTE": {`):]
	exec = exec[:strings.Index(exec, "}")]
	if strings.Contains(exec, "completed_at") || strings.Contains(exec, "tests red") || !strings.Contains(exec, `"status": "IN_PROGRESS"`) {
		t.Errorf("the re-started step keeps its failed run:\n%s", exec)
	}
	c = adaptertest.Fold(t, "t1", append(events, adaptertest.Event(ckpt.EventBlocker, min(5), ckpt.BlockerChange{Text: "Waiting for the API key"}))...)
	out = string(adaptertest.Export(t, New(), c))
	if !strings.Contains(out, `"step_status": "BLOCKED"`) || !strings.Contains(out, `"notes": "Waiting for the API key"`) {
		t.Errorf("a blocked checkpoint's current step:\n%s", out)
	}
}
