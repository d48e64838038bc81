package superpowers

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

type loopDoc struct {
	Loop struct {
		CurrentStep   string                    `json:"current_step"`
		StepStatus    string                    `json:"step_status"`
		StepStartedAt *string                   `json:"step_started_at"`
		Checkpoints   map[string]map[string]any `json:"checkpoints"`
	} `json:"loop_state"`
}

// TestMirrorFollowsTheSeedsFourSteps walks seed 000's loop (PLAN,
// EVALUATE_PLAN, EXECUTE, FIX) through the mirror, as the CLI writes it
// after every change, and checks each rule of the document's per-step
// checkpoint: the loop names a step from the start; the task under way is
// the step's own and does not travel to the next step; a step's
// step_started_at is its own; every step that ran has started_at, agent
// and a last_updated not older than its completion; times are whole
// seconds.
func TestMirrorFollowsTheSeedsFourSteps(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 2, 13, 12, 0, 0, 123456789, time.UTC) // a clock with a fraction
	min := func(m int) time.Time { return at.Add(time.Duration(m) * time.Minute) }
	str := func(s string) *string { return &s }
	events := []ckpt.Event{adaptertest.Event(ckpt.EventCreated, min(0), ckpt.Created{
		Patch: ckpt.Patch{TaskID: str("t1")},
		Steps: []ckpt.Step{{ID: "PLAN"}, {ID: "EVALUATE_PLAN"}, {ID: "EXECUTE"}, {ID: "FIX"}},
	})}
	var raw []byte
	mirror := func(add ...ckpt.Event) loopDoc {
		t.Helper()
		events = append(events, add...)
		if err := New().Mirror(root, adaptertest.Fold(t, "t1", events...)); err != nil {
			t.Fatal(err)
		}
		raw = adaptertest.ReadFile(t, filepath.Join(root, "conductor", "tracks", "t1", "metadata.json"))
		var doc loopDoc
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	step := func(m int, id string, st ckpt.StepStatus, by string) ckpt.Event {
		return adaptertest.Event(ckpt.EventStep, min(m), ckpt.StepChange{ID: id, Status: st, By: by})
	}

	doc := mirror()
	if doc.Loop.CurrentStep != "PLAN" || doc.Loop.StepStatus != "NOT_STARTED" {
		t.Errorf("right after start: current_step %q, step_status %q; want PLAN, NOT_STARTED", doc.Loop.CurrentStep, doc.Loop.StepStatus)
	}
	doc = mirror(step(1, "PLAN", ckpt.StepInProgress, "superpowers:writing-plans"),
		adaptertest.Event(ckpt.EventUpdate, min(2), ckpt.Patch{NextToProcess: str("Designing parameter schema")}))
	if task(doc, "PLAN") != "Designing parameter schema" {
		t.Errorf("PLAN's task under way: %v", doc.Loop.Checkpoints["PLAN"])
	}
	// Start: the step in progress, with its agent and its start, whole seconds.
	plan := doc.Loop.Checkpoints["PLAN"]
	if doc.Loop.CurrentStep != "PLAN" || doc.Loop.StepStatus != "IN_PROGRESS" || doc.Loop.StepStartedAt == nil || *doc.Loop.StepStartedAt != "2026-02-13T12:01:00Z" ||
		plan["status"] != "IN_PROGRESS" || plan["agent"] != "superpowers:writing-plans" || plan["started_at"] != "2026-02-13T12:01:00Z" || plan["completed_at"] != nil {
		t.Errorf("PLAN started: current_step %q, step_status %q, step_started_at %v, PLAN %v", doc.Loop.CurrentStep, doc.Loop.StepStatus, doc.Loop.StepStartedAt, plan)
	}
	doc = mirror(step(3, "PLAN", ckpt.StepDone, "superpowers:writing-plans"))
	if doc.Loop.CurrentStep != "EVALUATE_PLAN" || doc.Loop.StepStatus != "NOT_STARTED" || doc.Loop.StepStartedAt != nil {
		t.Errorf("after PLAN: %s %s step_started_at %v (PLAN's start is not EVALUATE_PLAN's)", doc.Loop.CurrentStep, doc.Loop.StepStatus, doc.Loop.StepStartedAt)
	}
	if task(doc, "EVALUATE_PLAN") != "" || task(doc, "PLAN") != "Designing parameter schema" {
		t.Errorf("PLAN's task moved to a step not started: %v", doc.Loop.Checkpoints)
	}
	doc = mirror(step(4, "EVALUATE_PLAN", ckpt.StepDone, "superpowers:evaluate-plan"),
		step(5, "EXECUTE", ckpt.StepInProgress, "superpowers:executing-plans"),
		step(20, "EXECUTE", ckpt.StepDone, "superpowers:executing-plans"),
		step(21, "FIX", ckpt.StepInProgress, "superpowers:systematic-debugging"))
	if doc.Loop.CurrentStep != "FIX" || doc.Loop.StepStatus != "IN_PROGRESS" || doc.Loop.StepStartedAt == nil || *doc.Loop.StepStartedAt != "2026-02-13T12:21:00Z" {
		t.Errorf("FIX under way: %s %s step_started_at %v, want FIX's own start 12:21:00", doc.Loop.CurrentStep, doc.Loop.StepStatus, doc.Loop.StepStartedAt)
	}
	for _, id := range []string{"EXECUTE", "FIX"} {
		if task(doc, id) != "" {
			t.Errorf("%s shows PLAN's task: %v", id, doc.Loop.Checkpoints[id])
		}
	}
	doc = mirror(step(30, "FIX", ckpt.StepDone, "superpowers:systematic-debugging"))
	for _, id := range []string{"PLAN", "EVALUATE_PLAN", "EXECUTE", "FIX"} {
		e := doc.Loop.Checkpoints[id]
		for _, k := range []string{"started_at", "agent", "last_updated", "completed_at"} {
			if e[k] == nil {
				t.Errorf("%s has no %s: %v", id, k, e)
			}
		}
		if e["last_updated"] != nil && e["completed_at"] != nil && e["last_updated"].(string) < e["completed_at"].(string) {
			t.Errorf("%s: last_updated %v older than completed_at %v", id, e["last_updated"], e["completed_at"])
		}
	}
	if strings.Contains(string(raw), ".123") {
		t.Errorf("times with a fraction, where seed 000 writes whole seconds:\n%s", raw)
	}
}

func task(doc loopDoc, step string) string {
	p, _ := doc.Loop.Checkpoints[step]["progress"].(map[string]any)
	s, _ := p["current_task"].(string)
	return s
}

// TestFinishingFixLeavesExecuteAlone: in seed 000's own loop example, FIX
// ending gives FIX its last_updated and leaves EXECUTE's as the file had
// it.
func TestFinishingFixLeavesExecuteAlone(t *testing.T) {
	c, _ := adaptertest.ImportFile(t, New(), "testdata/seed/seed000-loop.json")
	at := c.UpdatedAt.Add(time.Hour)
	s := adaptertest.Stored(t, "param-schema", c, c.UpdatedAt)
	s = adaptertest.Then(t, s,
		adaptertest.Event(ckpt.EventStep, at, ckpt.StepChange{ID: "FIX", Status: ckpt.StepDone}),
		adaptertest.Event(ckpt.EventBlocker, at, ckpt.BlockerChange{ID: "FIX", Clear: true}))
	var doc loopDoc
	if err := json.Unmarshal(adaptertest.Export(t, New(), s), &doc); err != nil {
		t.Fatal(err)
	}
	fix, exec := doc.Loop.Checkpoints["FIX"], doc.Loop.Checkpoints["EXECUTE"]
	if fix["last_updated"] != "2026-02-13T15:10:00Z" || fix["completed_at"] != "2026-02-13T15:10:00Z" {
		t.Errorf("FIX after it ended: %v", fix)
	}
	if exec["last_updated"] != "2026-02-13T14:10:00Z" {
		t.Errorf("EXECUTE's last_updated moved though EXECUTE did not change: %v", exec["last_updated"])
	}
}

// TestStepFieldsFromMeta: the step fields seed 000's update protocol names
// and ckpt does not model (EXECUTE's tasks_total, tasks_completed,
// last_commit; FIX's issues_total, issues_fixed, current_issue) are written
// from the meta key superpowers.<STEP>.
func TestStepFieldsFromMeta(t *testing.T) {
	at := time.Date(2026, 2, 13, 12, 0, 0, 0, time.UTC)
	c := adaptertest.Fold(t, "t1",
		adaptertest.Event(ckpt.EventCreated, at, ckpt.Created{Steps: []ckpt.Step{{ID: "EXECUTE"}, {ID: "FIX"}}}),
		adaptertest.Event(ckpt.EventStep, at, ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress, By: "superpowers:executing-plans"}),
		adaptertest.Event(ckpt.EventUpdate, at, ckpt.Patch{Meta: map[string]json.RawMessage{
			"superpowers.EXECUTE": json.RawMessage(`{"progress":{"tasks_total":12,"tasks_completed":3},"last_commit":"4f2a9c1","status":"ignored"}`),
			"superpowers.FIX":     json.RawMessage(`{"issues_total":2,"issues_fixed":1,"current_issue":"spec.md missing"}`),
		}}))
	var doc loopDoc
	out := adaptertest.Export(t, New(), c)
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	exec, fix := doc.Loop.Checkpoints["EXECUTE"], doc.Loop.Checkpoints["FIX"]
	p, _ := exec["progress"].(map[string]any)
	if exec["last_commit"] != "4f2a9c1" || exec["status"] != "IN_PROGRESS" || p["tasks_total"] != float64(12) || p["tasks_completed"] != float64(3) {
		t.Errorf("EXECUTE: %v", exec)
	}
	if fix["issues_total"] != float64(2) || fix["issues_fixed"] != float64(1) || fix["current_issue"] != "spec.md missing" {
		t.Errorf("FIX: %v", fix)
	}
}

// TestImportReportsMissingRequiredFields: a step that ran without the
// fields seed 000 requires is named on import.
func TestImportReportsMissingRequiredFields(t *testing.T) {
	im, err := New().Import("metadata.json", []byte(`{"track_id":"t1","loop_state":{"current_step":"PLAN","checkpoints":{"PLAN":{"status":"PASSED","agent":"a"},"EXECUTE":{"status":"NOT_STARTED"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(im.Warnings, "\n")
	if !strings.Contains(got, "PLAN lacks what seed 000 requires of a step that ran: started_at, last_updated") || strings.Contains(got, "EXECUTE lacks") {
		t.Errorf("warnings:\n%s", got)
	}
}

// TestStepStatusWords: the per-step status words of seed 000 are written
// for ckpt's step states (PASSED, FAILED, IN_PROGRESS, NOT_STARTED;
// BLOCKED in TestRestartedAndBlockedSteps) and read back to them; a
// finished step carries its output_files and notes, a failed one its
// "ERROR: …" note.
func TestStepStatusWords(t *testing.T) {
	at := time.Date(2026, 2, 13, 12, 0, 0, 0, time.UTC)
	c := adaptertest.Fold(t, "t1",
		adaptertest.Event(ckpt.EventCreated, at, ckpt.Created{Steps: []ckpt.Step{{ID: "PLAN"}, {ID: "EVALUATE_PLAN"}, {ID: "EXECUTE"}, {ID: "FIX"}}}),
		adaptertest.Event(ckpt.EventStep, at.Add(time.Minute), ckpt.StepChange{ID: "PLAN", Status: ckpt.StepDone, Output: "conductor/tracks/t1/plan.md\nconductor/tracks/t1/spec.md", Notes: "plan written"}),
		adaptertest.Event(ckpt.EventStep, at.Add(2*time.Minute), ckpt.StepChange{ID: "EVALUATE_PLAN", Status: ckpt.StepFailed, Notes: "ERROR: Missing required spec.md file"}),
		adaptertest.Event(ckpt.EventStep, at.Add(3*time.Minute), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress}))
	out := adaptertest.Export(t, New(), c)
	var doc loopDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"PLAN": "PASSED", "EVALUATE_PLAN": "FAILED", "EXECUTE": "IN_PROGRESS"} {
		if got := doc.Loop.Checkpoints[id]["status"]; got != want {
			t.Errorf("%s written as %v, want %s", id, got, want)
		}
	}
	if fix := doc.Loop.Checkpoints["FIX"]; fix != nil && fix["status"] != "NOT_STARTED" {
		t.Errorf("FIX not started written as %v", fix)
	}
	// On completion, output_files and notes; a failure's ERROR note.
	plan, eval := doc.Loop.Checkpoints["PLAN"], doc.Loop.Checkpoints["EVALUATE_PLAN"]
	if files, _ := json.Marshal(plan["output_files"]); string(files) != `["conductor/tracks/t1/plan.md","conductor/tracks/t1/spec.md"]` || plan["notes"] != "plan written" {
		t.Errorf("PLAN's output_files and notes: %v", plan)
	}
	if eval["notes"] != "ERROR: Missing required spec.md file" {
		t.Errorf("the failed step's note: %v", eval)
	}
	im, err := New().Import("metadata.json", out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ckpt.StepStatus{}
	for _, s := range im.State.Steps {
		got[s.ID] = s.Status
	}
	for id, want := range map[string]ckpt.StepStatus{"PLAN": ckpt.StepDone, "EVALUATE_PLAN": ckpt.StepFailed, "EXECUTE": ckpt.StepInProgress, "FIX": ckpt.StepPending} {
		if got[id] != want {
			t.Errorf("%s read back as %q, want %q", id, got[id], want)
		}
	}
}
