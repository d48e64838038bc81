package agentcheckpoints

import (
	"fmt"
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

func TestImportReadsEveryFieldOfTheDocument(t *testing.T) {
	c, w := adaptertest.ImportFile(t, New(), "testdata/seed/seed002-primary.json")
	want := &ckpt.Checkpoint{
		Agent:       ckpt.Agent{ID: "Agent-Primary", Type: "primary"},
		Session:     ckpt.Session{ID: "abc123def456"},
		TaskID:      "feature_01_player_json",
		Stage:       "S2.P2",
		Phase:       "Specification",
		CurrentStep: "Writing spec.md Requirements Section 5 (Error Handling)",
		Status:      ckpt.StatusInProgress,
		Steps: []ckpt.Step{
			{ID: "s2-p1-complete", Title: "S2.P1 complete", Status: ckpt.StepDone},
			{ID: "s2-p2-phase-0-read-guide", Title: "S2.P2 Phase 0: Read guide", Status: ckpt.StepDone},
			{ID: "s2-p2-phase-1-requirements-sections-1-4-written", Title: "S2.P2 Phase 1: Requirements Sections 1-4 written", Status: ckpt.StepDone},
		},
		Progress: ckpt.Progress{Done: 3, Total: 3, Percent: 100},
		Files:    ckpt.Files{Modified: []string{"feature_01_player_json/spec.md", "feature_01_player_json/checklist.md", "EPIC_README.md"}},
		Resume: ckpt.Resume{Resumable: true,
			Instructions: "Resume from S2.P2 Specification Phase. spec.md partially complete (70% done). Continue from Requirements Section 5.",
			NextSteps:    []string{"Complete Requirements Section 5", "Write Acceptance Criteria", "Create checklist.md questions"}},
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(15 * time.Minute)},
		UpdatedAt: time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC),
	}
	got := c.Clone()
	got.ID, got.Meta = "", nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seed example (-want +got):\n%s", diff)
	}
	if len(w) != 1 || !strings.Contains(w[0], "coordination_state") {
		t.Errorf("warnings %q, want only coordination_state kept aside", w)
	}
}

// TestImportReadsTheDriftOfRealFiles: each way real files depart from the
// document is read and said.
func TestImportReadsTheDriftOfRealFiles(t *testing.T) {
	c, w := adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-7.secondary_g.json")
	if c.Status != ckpt.StatusWaiting || c.Heartbeat.Interval != 0 || len(c.ActiveBlockers()) != 1 {
		t.Errorf("PAUSED file: status %s, interval %v, blockers %v", c.Status, c.Heartbeat.Interval, c.Blockers)
	}
	if !adaptertest.HasWarning(w, `"N/A (paused)"`) || !adaptertest.HasWarning(w, "gate_1_audit, gate_2_status") {
		t.Errorf("PAUSED file warnings: %q", w)
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-7.secondary-h.json")
	if len(c.Blockers) != 1 || !strings.HasPrefix(c.Blockers[0].Text, "Waiting for Features 01-08") ||
		!c.UpdatedAt.Equal(time.Date(2026, 1, 30, 4, 45, 0, 0, time.UTC)) ||
		!slices.Equal(c.Resume.NextSteps, []string{"Resume when Features 01-08 specs complete"}) {
		t.Errorf("string blockers / timestamp / next_action: %+v", c)
	}
	for _, part := range []string{"blockers is text where a list was promised", "timestamp read as", "next_action read as", "no can_resume"} {
		if !adaptertest.HasWarning(w, part) {
			t.Errorf("secondary-h warnings lack %q: %q", part, w)
		}
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-7.secondary_d.json")
	if c.Status != ckpt.StatusWaiting || !adaptertest.HasWarning(w, `"WAITING_FOR_SYNC"`) {
		t.Errorf("WAITING_FOR_SYNC: %s %q", c.Status, w)
	}

	c, _ = adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-7.secondary-a-1769654893.json")
	if c.Status != ckpt.StatusDone || c.Agent != (ckpt.Agent{ID: "secondary-a-1769654893", Name: "Secondary-A"}) || c.CompletedAt == nil {
		t.Errorf("agent_role file: %s %+v", c.Status, c.Agent)
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-8.secondary_a_checkpoint.md")
	if c.Agent.ID != "Secondary-A" || c.Status != ckpt.StatusWaiting || len(c.Steps) != 17 || len(c.Resume.NextSteps) != 4 ||
		!slices.Equal(c.Files.Modified, []string{"agent_checkpoints/secondary_a_checkpoint.md", "feature_02_league_helper_logging/STATUS", "feature_02_league_helper_logging/README.md"}) ||
		!c.UpdatedAt.Equal(time.Date(2026, 2, 6, 21, 50, 0, 0, time.UTC)) || !c.Resume.Resumable ||
		!strings.HasPrefix(c.Resume.Instructions, "Just started.") {
		t.Errorf("Markdown variant: %+v", c)
	}
	for _, part := range []string{"Markdown variant", "UTC assumed", `"READY_FOR_SYNC"`, "(created, updated)", "coordination_state"} {
		if !adaptertest.HasWarning(w, part) {
			t.Errorf("Markdown variant warnings lack %q: %q", part, w)
		}
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-8.secondary_b_checkpoint.misplaced.md")
	if c.Agent.ID != "Secondary-B" || len(c.Blockers) != 0 || len(c.Files.Modified) != 0 || !adaptertest.HasWarning(w, "flattened") {
		t.Errorf("misplaced Markdown variant: %+v %q", c, w)
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-7.feature_02.STATUS")
	if c.Stage != "S2.P3" || c.Status != ckpt.StatusDone || c.Agent.Name != "Secondary-A" || !adaptertest.HasWarning(w, "STATUS file") {
		t.Errorf("STATUS file: %+v %q", c, w)
	}
}

func TestImportRefusesWhatIsNotACheckpoint(t *testing.T) {
	for name, in := range map[string]string{
		"empty":    "\n",
		"broken":   `{"agent_id": "A", `,
		"no field": `{"hooks": {}}`,
		"array":    `["agent_id"]`,
		"prose":    "just some notes\nwithout fields\n",
	} {
		if _, err := New().Import(name+".json", []byte(in)); err == nil {
			t.Errorf("%s: imported", name)
		}
	}
}

// TestRoundTripImportExport: the export of an imported file reproduces
// every field of it (for the Markdown and STATUS variants: every field read
// from them, as JSON), directly and through a store's fold.
func TestRoundTripImportExport(t *testing.T) {
	adaptertest.EachInput(t, "", func(t *testing.T, path string, want []byte) {
		c, _ := adaptertest.ImportFile(t, New(), path)
		if filepath.Ext(path) != ".json" {
			m, src, err := jsondoc.ReadMeta(c, Name)
			if err != nil || src == nil || m.File == "" {
				t.Fatalf("meta: %v %v %q", err, src, m.File)
			}
			want = src.Raw()
		}
		adaptertest.SameJSON(t, "export", want, adaptertest.Export(t, New(), c))
		s := adaptertest.Stored(t, "kai/agent", c, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
		if c.UpdatedAt.IsZero() {
			return // a store gives it an update time the file did not have
		}
		adaptertest.SameJSON(t, "export of the stored state", want, adaptertest.Export(t, New(), s))
	})
}

// native is a checkpoint made with ckpt's own events.
func native(t testing.TB) *ckpt.Checkpoint {
	t0 := time.Date(2026, 1, 29, 15, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	iv := ckpt.Duration(10 * time.Minute)
	return adaptertest.Fold(t, "kai-7/secondary_a",
		adaptertest.Event(ckpt.EventCreated, at(0), ckpt.Created{
			Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "Secondary-A", Type: "secondary"}, TaskID: adaptertest.Ptr("feature_02_schedule_fetcher"),
				Stage: adaptertest.Ptr("S2.P1"), Phase: adaptertest.Ptr("Research"), Interval: &iv},
			Session: ckpt.Session{ID: "sess-1"},
			Steps:   []ckpt.Step{{ID: "read-guide", Title: "Read S2.P1 guide"}, {ID: "research", Title: "Phase 1: research"}},
		}),
		adaptertest.Event(ckpt.EventStep, at(5), ckpt.StepChange{ID: "read-guide", Status: ckpt.StepDone}),
		adaptertest.Event(ckpt.EventStep, at(6), ckpt.StepChange{ID: "research", Status: ckpt.StepInProgress}),
		adaptertest.Event(ckpt.EventUpdate, at(20), ckpt.Patch{FilesModified: []string{"feature_02/spec.md"}, FilesCreated: []string{"research/NOTES.md"},
			Instructions: adaptertest.Ptr("Continue the research from section 3."), NextSteps: &[]string{"Finish research", "Run the audit"},
			CurrentStep: adaptertest.Ptr("Researching the schedule API")}),
		adaptertest.Event(ckpt.EventBlocker, at(25), ckpt.BlockerChange{Text: "DISCOVERY.md missing"}),
	)
}

// carried keeps the fields agent_checkpoints/<agent>.json carries.
func carried(c *ckpt.Checkpoint) *ckpt.Checkpoint {
	out := &ckpt.Checkpoint{
		Agent: c.Agent, Session: ckpt.Session{ID: c.Session.ID}, TaskID: c.TaskID, Stage: c.Stage, Phase: c.Phase,
		CurrentStep: c.CurrentStep, Status: c.Status, UpdatedAt: c.LastSeen(), Heartbeat: ckpt.Heartbeat{Interval: c.Heartbeat.Interval},
		Resume: ckpt.Resume{Resumable: c.Resume.Resumable, Instructions: c.Resume.Instructions, NextSteps: c.Resume.NextSteps},
	}
	if c.Status.Final() {
		out.CompletedAt = &out.UpdatedAt
	}
	// completed_steps carries the titles of finished steps, as done steps.
	ids := jsondoc.StepIDs{}
	for _, s := range c.Steps {
		if s.Status.Finished() {
			out.Steps = append(out.Steps, ckpt.Step{ID: ids.Make(s.Label()), Title: s.Label(), Status: ckpt.StepDone})
		}
	}
	// files_modified carries created and modified files; blockers their
	// text, since the last checkpoint.
	out.Files.Modified = jsondoc.UniqueNonEmpty(append(append([]string{}, c.Files.Modified...), c.Files.Created...))
	for i, b := range c.ActiveBlockers() {
		out.Blockers = append(out.Blockers, ckpt.Blocker{ID: fmt.Sprintf("b%d", i+1), Text: b.Text, Since: out.UpdatedAt})
	}
	ckpt.Derive(out)
	return out
}

func TestRoundTripExportImport(t *testing.T) {
	c := native(t)
	out, im := adaptertest.ExportImport(t, New(), c, "agent_checkpoints/secondary_a.json")
	got := im.State.Clone()
	got.ID, got.Meta = "", nil
	if diff := cmp.Diff(carried(c), got); diff != "" {
		t.Errorf("import of the export differs (-state +reimported):\n%s\nexport:\n%s", diff, out)
	}
	if adaptertest.HasWarning(im.Warnings, "assumed") || adaptertest.HasWarning(im.Warnings, "not a") {
		t.Errorf("a file ckpt wrote needs no guess, got %q", im.Warnings)
	}
	// Every imported input: import → export → import gives the same state.
	adaptertest.CheckReimport(t, New(), "")
}

// TestExportWritesChangesInTheFilesSpelling: a changed state writes its
// changes, keeps the unknown fields and keeps a string blocker a string only
// while it is unchanged.
func TestExportWritesChanges(t *testing.T) {
	c, _ := adaptertest.ImportFile(t, New(), "testdata/fixtures/KAI-7.secondary_g.json")
	at := c.UpdatedAt.Add(time.Hour)
	s := adaptertest.Stored(t, "kai-7/secondary_g", c, at)
	s = adaptertest.Then(t, s,
		adaptertest.Event(ckpt.EventBlocker, at, ckpt.BlockerChange{Clear: true}),
		adaptertest.Event(ckpt.EventStatus, at, ckpt.StatusChange{Status: ckpt.StatusInProgress}),
		adaptertest.Event(ckpt.EventUpdate, at, ckpt.Patch{Stage: adaptertest.Ptr("S2.P3")}),
	)
	out := adaptertest.Export(t, New(), s)
	doc := adaptertest.Decoded(t, out).(map[string]any)
	if doc["status"] != "IN_PROGRESS" || doc["stage"] != "S2.P3" || len(doc["blockers"].([]any)) != 0 {
		t.Errorf("changes not written: %v", doc)
	}
	if doc["next_checkpoint_expected"] != "2026-01-29T05:30:00Z" || doc["last_checkpoint"] != "2026-01-29T05:15:00Z" {
		t.Errorf("timestamps: last %v next %v", doc["last_checkpoint"], doc["next_checkpoint_expected"])
	}
	if doc["gate_2_status"].(map[string]any)["reason"] != "User requested pause until Features 01-07 complete specifications" {
		t.Errorf("unknown field lost: %v", doc["gate_2_status"])
	}
	// A beat moves last_checkpoint, as seed 002's heartbeat update does.
	s.Heartbeat.LastBeat = at.Add(10 * time.Minute)
	out, _ = New().Export(s)
	if doc := adaptertest.Decoded(t, out).(map[string]any); doc["last_checkpoint"] != "2026-01-29T05:25:00Z" {
		t.Errorf("a beat did not move last_checkpoint: %v", doc["last_checkpoint"])
	}
}
