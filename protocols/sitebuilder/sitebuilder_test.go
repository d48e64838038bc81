package sitebuilder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
	"github.com/google/go-cmp/cmp"
)

func TestImportGolden(t *testing.T) { adaptertest.ImportGolden(t, New()) }

type statusGolden struct {
	Rows     []StatusRow `json:"rows,omitempty"`
	Warnings []string    `json:"warnings,omitempty"`
	Error    string      `json:"error,omitempty"`
}

func TestParseStatusMarkdownGolden(t *testing.T) {
	adaptertest.EachInput(t, ".md", func(t *testing.T, path string, data []byte) {
		rows, warnings, err := ParseStatusMarkdown(data)
		res := statusGolden{Rows: rows, Warnings: warnings}
		if err != nil {
			res = statusGolden{Error: err.Error()}
		}
		adaptertest.CheckGolden(t, filepath.Base(path)+".status.json", res)
	})
}

func TestImportReadsEveryFieldOfTheSchema(t *testing.T) {
	c, w := adaptertest.ImportFile(t, New(), "testdata/seed/seed003-schema.json")
	if c.ID != "migration-T060" || c.Agent != (ckpt.Agent{ID: "migration", Name: "Riley"}) || c.TaskID != "T060" ||
		c.Title != "Convert Nature Trail PDFs to Markdown" || c.Session.ID != "migration-T060-20251208-143025" {
		t.Errorf("identity: %+v", c)
	}
	steps := []string{}
	for _, s := range c.Steps {
		steps = append(steps, s.ID+":"+string(s.Status)+":"+s.Output)
	}
	if want := []string{"post-01:done:pdfs-markdown/nature-trail/post-01.md", "post-02:done:pdfs-markdown/nature-trail/post-02.md",
		"post-20:in_progress:", "post-21:pending:"}; !slices.Equal(steps, want) {
		t.Errorf("steps %v", steps)
	}
	if len(c.Acceptance) != 3 || c.Acceptance[0] != (ckpt.Criterion{ID: "29_files_created"}) || !c.Acceptance[1].Met {
		t.Errorf("acceptance %+v", c.Acceptance)
	}
	if v, ok := c.ReviewScores["agent_4"]; !ok || v != nil || len(c.ReviewScores) != 2 {
		t.Errorf("review scores %v", c.ReviewScores)
	}
	if c.Context != (ckpt.Context{LastProcessed: "Post19English.pdf", NextToProcess: "Post20English.pdf", Notes: "Hindi and Polish variants discovered - flagging for review"}) {
		t.Errorf("context %+v", c.Context)
	}
	if !c.Resume.Resumable || !strings.HasPrefix(c.Resume.Instructions, "Continue from post-20.md") || c.Heartbeat.Interval.D() != DefaultInterval {
		t.Errorf("resume %+v heartbeat %+v", c.Resume, c.Heartbeat)
	}
	for _, part := range []string{"lists 4 of 29", "progress_percent 65", "no heartbeat"} {
		if !adaptertest.HasWarning(w, part) {
			t.Errorf("warnings lack %q: %q", part, w)
		}
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/seed/seed003-blocked.json")
	if c.Status != ckpt.StatusBlocked || len(c.Errors) != 1 || !c.Errors[0].Blocking || c.Errors[0].Type != "dependency_missing" ||
		!c.Errors[0].At.Equal(time.Date(2025, 12, 8, 14, 52, 10, 0, time.UTC)) {
		t.Errorf("blocked fragment: %+v", c)
	}
	if c.ID != "seed003-blocked" || !adaptertest.HasWarning(w, "no updated_at") {
		t.Errorf("blocked fragment: id %q warnings %q", c.ID, w)
	}

	c, w = adaptertest.ImportFile(t, New(), "testdata/seed/migration-T060-complete.json")
	if c.ID != "migration-T060" || c.Archived == nil || c.Archived.Reason != "complete" || c.Status != ckpt.StatusDone ||
		c.Resume.Resumable || c.Progress != (ckpt.Progress{Done: 29, Total: 29, Percent: 100}) ||
		!c.Heartbeat.LastBeat.Equal(time.Date(2025, 12, 8, 15, 29, 0, 0, time.UTC)) || c.Heartbeat.Interval.D() != 5*time.Minute {
		t.Errorf("complete archive: %+v", c)
	}
	if c.PartiallyComplete() || *c.ReviewScores["agent_4"] != 88 || !adaptertest.HasWarning(w, "-complete file") {
		t.Errorf("complete archive: scores %v warnings %q", c.ReviewScores, w)
	}
}

func TestImportRefusesWhatIsNotACheckpoint(t *testing.T) {
	for name, in := range map[string]string{
		"empty":    "",
		"markdown": "## Active Checkpoints\n",
		"broken":   `{"agent": `,
		"no field": `{"hooks": {}}`,
	} {
		if _, err := New().Import(name+".json", []byte(in)); err == nil {
			t.Errorf("%s: imported", name)
		}
	}
}

func TestRoundTripImportExport(t *testing.T) {
	adaptertest.EachInput(t, ".json", func(t *testing.T, path string, data []byte) {
		c, _ := adaptertest.ImportFile(t, New(), path)
		adaptertest.SameJSON(t, "export", data, adaptertest.Export(t, New(), c))
		if c.UpdatedAt.IsZero() {
			return // a store gives it an update time the file did not have
		}
		s := adaptertest.Stored(t, c.ID, c, time.Time{})
		adaptertest.SameJSON(t, "export of the stored state", data, adaptertest.Export(t, New(), s))
	})
}

// TestPartialItemsCarryTheFilesCounts: the schema example lists 4 of its 29
// subtasks; finishing one of the listed moves the file's counts by one.
func TestPartialItemsCarryTheFilesCounts(t *testing.T) {
	c, _ := adaptertest.ImportFile(t, New(), "testdata/seed/seed003-schema.json")
	s := adaptertest.Stored(t, c.ID, c, time.Time{})
	if got := OutboxLine(s); got != "@orchestrator: Task T060 progress: 65%" {
		t.Errorf("outbox line before: %q", got)
	}
	s = adaptertest.Then(t, s,
		adaptertest.Event(ckpt.EventStep, c.UpdatedAt.Add(time.Minute), ckpt.StepChange{ID: "post-20", Status: ckpt.StepDone, Output: "pdfs-markdown/nature-trail/post-20.md"}),
		adaptertest.Event(ckpt.EventUpdate, c.UpdatedAt.Add(time.Minute), ckpt.Patch{LastProcessed: adaptertest.Ptr("Post20English.pdf"), NextToProcess: adaptertest.Ptr("Post21English.pdf")}),
	)
	out := adaptertest.Export(t, New(), s)
	doc := adaptertest.Decoded(t, out).(map[string]any)
	sub := doc["subtasks"].(map[string]any)
	if sub["total"] != float64(29) || sub["completed"] != float64(20) || sub["failed"] != float64(0) || doc["progress_percent"] != float64(69) {
		t.Errorf("counts: %v, %v%%", sub, doc["progress_percent"])
	}
	item := sub["items"].([]any)[2].(map[string]any)
	if item["id"] != "post-20" || item["status"] != "complete" || item["output"] != "pdfs-markdown/nature-trail/post-20.md" {
		t.Errorf("item: %v", item)
	}
	if doc["updated_at"] != "2025-12-08T14:53:10Z" || doc["context"].(map[string]any)["next_to_process"] != "Post21English.pdf" {
		t.Errorf("doc: %v", doc)
	}
	if got := OutboxLine(s); got != "@orchestrator: Task T060 progress: 69%" {
		t.Errorf("outbox line after: %q", got)
	}
}

func native(t testing.TB) *ckpt.Checkpoint {
	t0 := time.Date(2025, 12, 8, 14, 30, 25, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	iv := ckpt.Duration(DefaultInterval)
	return adaptertest.Fold(t, "sitebuilder/migration-T060",
		adaptertest.Event(ckpt.EventCreated, at(0), ckpt.Created{
			Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "migration", Name: "Riley"}, TaskID: adaptertest.Ptr("T060"),
				Title: adaptertest.Ptr("Convert Nature Trail PDFs to Markdown"), Interval: &iv},
			Steps:      []ckpt.Step{{ID: "post-01"}, {ID: "post-02"}, {ID: "post-03", Title: "Post 3"}},
			Acceptance: []ckpt.Criterion{{ID: "3_files_created"}, {ID: "frontmatter_valid"}},
		}),
		adaptertest.Event(ckpt.EventStep, at(1), ckpt.StepChange{ID: "post-01", Status: ckpt.StepDone, Output: "post-01.md"}),
		adaptertest.Event(ckpt.EventStep, at(2), ckpt.StepChange{ID: "post-02", Status: ckpt.StepFailed}),
		adaptertest.Event(ckpt.EventStep, at(3), ckpt.StepChange{ID: "post-03", Status: ckpt.StepInProgress}),
		adaptertest.Event(ckpt.EventAccept, at(4), ckpt.AcceptChange{ID: "frontmatter_valid", Met: true}),
		adaptertest.Event(ckpt.EventError, at(5), ckpt.ErrorChange{Type: "dependency_missing", Message: "no Post02English.pdf", Blocking: true}),
		adaptertest.Event(ckpt.EventUpdate, at(6), ckpt.Patch{FilesCreated: []string{"post-01.md"}, FilesModified: []string{"MANIFEST.json"},
			LastProcessed: adaptertest.Ptr("Post01English.pdf"), NextToProcess: adaptertest.Ptr("Post03English.pdf"), Notes: adaptertest.Ptr("post 2 source missing"),
			Instructions: adaptertest.Ptr("Find Post02English.pdf, then redo post-02"), ReviewScores: map[string]*float64{"agent_4": adaptertest.Ptr(85.0), "agent_5": nil}}),
	)
}

// carried keeps the fields progress/checkpoints/<agent>-<task>.json carries.
func carried(c *ckpt.Checkpoint) *ckpt.Checkpoint {
	out := &ckpt.Checkpoint{
		Agent: c.Agent, Session: ckpt.Session{ID: checkpointID(c)}, TaskID: c.TaskID, Title: c.Title, Status: c.Status,
		Steps: c.Steps, Progress: c.Progress, Acceptance: c.Acceptance, ReviewScores: c.ReviewScores,
		Files: c.Files, Context: c.Context, Resume: ckpt.Resume{Resumable: c.Resume.Resumable, Instructions: c.Resume.Instructions},
		Heartbeat: c.Heartbeat, StartedAt: c.StartedAt, UpdatedAt: c.UpdatedAt, CompletedAt: c.CompletedAt,
	}
	out.Steps = nil
	for _, s := range c.Steps { // items carry id, title, status and output
		out.Steps = append(out.Steps, ckpt.Step{ID: s.ID, Title: s.Title, Status: s.Status, Output: s.Output})
	}
	out.Acceptance = nil
	for _, a := range c.Acceptance { // met or not, not when
		out.Acceptance = append(out.Acceptance, ckpt.Criterion{ID: a.ID, Met: a.Met})
	}
	out.Errors = c.ActiveErrors() // cleared errors are removed from the file
	return out
}

func TestRoundTripExportImport(t *testing.T) {
	c := native(t)
	c.Heartbeat.LastBeat = c.UpdatedAt.Add(time.Minute)
	out, im := adaptertest.ExportImport(t, New(), c, "progress/checkpoints/migration-T060.json")
	got := im.State.Clone()
	got.ID, got.Meta = "", nil
	if diff := cmp.Diff(carried(c), got); diff != "" {
		t.Errorf("import of the export differs (-state +reimported):\n%s\nexport:\n%s", diff, out)
	}
	if len(im.Warnings) != 0 {
		t.Errorf("a file ckpt wrote needs no guess, got %q", im.Warnings)
	}
	adaptertest.CheckReimport(t, New(), "")
}

func TestOutboxLine(t *testing.T) {
	c := native(t) // 1 of 3 subtasks done
	if got := OutboxLine(c); got != "@orchestrator: Task T060 progress: 33%" {
		t.Errorf("OutboxLine = %q", got)
	}
	c.TaskID = ""
	if got := OutboxLine(c); got != "@orchestrator: Task sitebuilder/migration-T060 progress: 33%" {
		t.Errorf("without a task ID: %q", got)
	}
}

func TestMirrorWritesTheCheckpointAndTheCompleteArchive(t *testing.T) {
	root := t.TempDir()
	c := native(t)
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(root, "progress", "checkpoints", "migration-T060.json")
	want, _ := New().Export(c)
	if string(adaptertest.ReadFile(t, live)) != string(want) {
		t.Errorf("mirror is not the export")
	}
	c = adaptertest.Then(t, c,
		adaptertest.Event(ckpt.EventStatus, c.UpdatedAt.Add(time.Hour), ckpt.StatusChange{Status: ckpt.StatusDone}),
		adaptertest.Event(ckpt.EventArchived, c.UpdatedAt.Add(time.Hour), ckpt.Archive{Reason: "complete"}),
	)
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(root, "progress", "checkpoints", archiveName("migration", "T060"))
	if filepath.Base(archive) != "migration-T060-complete.json" {
		t.Errorf("ArchiveName = %s", filepath.Base(archive))
	}
	want, _ = New().Export(c)
	if string(adaptertest.ReadFile(t, archive)) != string(want) {
		t.Errorf("the archive is not the export")
	}
	if _, err := os.Stat(live); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the live file stays after archiving: %v", err)
	}
	c.Agent.ID = "../../x"
	if err := New().Mirror(root, c); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("an agent ID that leaves the folder: %v", err)
	}
}

// TestFileKeepsTheStatusTheSeedsResumeChecks: ckpt resumes waiting and
// failed work too, but the file says so in its status word, so the seed's
// own --resume check ("status must be in_progress or blocked") still
// refuses them; work in progress and blocked work it accepts.
func TestFileKeepsTheStatusTheSeedsResumeChecks(t *testing.T) {
	at := time.Date(2025, 12, 8, 14, 30, 0, 0, time.UTC)
	for status, word := range map[ckpt.Status]string{
		ckpt.StatusWaiting: "waiting", ckpt.StatusFailed: "failed", ckpt.StatusInProgress: "in_progress", ckpt.StatusBlocked: "blocked",
	} {
		c := adaptertest.Fold(t, "migration-T060",
			adaptertest.Event(ckpt.EventCreated, at, ckpt.Created{Patch: ckpt.Patch{TaskID: adaptertest.Ptr("T060"), Agent: &ckpt.Agent{ID: "migration"}}}),
			adaptertest.Event(ckpt.EventStatus, at.Add(time.Minute), ckpt.StatusChange{Status: status, Reason: "why"}))
		doc := adaptertest.Decoded(t, adaptertest.Export(t, New(), c)).(map[string]any)
		if doc["status"] != word {
			t.Errorf("%s work written as status %v, want %q", status, doc["status"], word)
		}
	}
}
