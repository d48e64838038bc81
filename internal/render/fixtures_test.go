package render

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// The checkpoints the tests render are built the way the store builds them:
// by folding a history of events, so that derived fields (progress, step
// times, statuses set by blockers) are the real ones.

type ev struct {
	at   time.Time
	typ  ckpt.EventType
	data any
}

func fold(tb testing.TB, id string, evs ...ev) *ckpt.Checkpoint {
	tb.Helper()
	events := make([]ckpt.Event, len(evs))
	for i, e := range evs {
		events[i] = ckpt.MustEvent(e.typ, e.at, ckpt.Actor{}, e.data)
		events[i].Seq = int64(i + 1)
	}
	c, err := ckpt.Fold(id, events)
	if err != nil {
		tb.Fatalf("folding %s: %v", id, err)
	}
	return c
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// t060 is seed 003's example: migration agent Riley on T060, 19 of 29 posts
// converted, post-20 under way, one acceptance criterion still unmet.
func t060(tb testing.TB) *ckpt.Checkpoint {
	steps := make([]ckpt.Step, 29)
	for i := range steps {
		steps[i] = ckpt.Step{ID: fmt.Sprintf("post-%02d", i+1), Status: ckpt.StepPending}
		switch {
		case i < 19:
			steps[i].Status = ckpt.StepDone
			steps[i].Output = fmt.Sprintf("pdfs-markdown/nature-trail/post-%02d.md", i+1)
		case i == 19:
			steps[i].Status = ckpt.StepInProgress
		}
	}
	interval := ckpt.Duration(5 * time.Minute)
	return fold(tb, "migration-T060",
		ev{ts("2025-12-08T14:30:25Z"), ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{
				Title:       ptr("Convert Nature Trail PDFs to Markdown"),
				TaskID:      ptr("T060"),
				Agent:       &ckpt.Agent{ID: "migration", Name: "Riley"},
				CurrentStep: ptr("post-20"),
				Interval:    &interval,
			},
			Steps: steps,
			Acceptance: []ckpt.Criterion{
				{ID: "29_files_created"}, {ID: "frontmatter_valid", Met: true}, {ID: "manifest_updated", Met: true},
			},
		}},
		ev{ts("2025-12-08T14:45:00Z"), ckpt.EventDecision, ckpt.DecisionData{
			Text: "Keep Hindi and Polish variants out of this batch", Reason: "they need a human review first",
		}},
		ev{ts("2025-12-08T14:52:10Z"), ckpt.EventUpdate, ckpt.Patch{
			FilesCreated: []string{
				"docs/content-extraction/pdfs-markdown/nature-trail/post-01.md",
				"docs/content-extraction/pdfs-markdown/nature-trail/post-02.md",
			},
			FilesModified: []string{"docs/content-extraction/pdfs-markdown/MANIFEST.json"},
			LastProcessed: ptr("Post19English.pdf"),
			NextToProcess: ptr("Post20English.pdf"),
			Notes:         ptr("Hindi and Polish variants discovered - flagging for review"),
			Instructions:  ptr("Continue from post-20.md, source: NatureTrail/NTEnglish/Text/Post20English.pdf"),
		}},
	)
}

// t040 is seed 003's finished technical task, every criterion met.
func t040(tb testing.TB) *ckpt.Checkpoint {
	return fold(tb, "technical-T040",
		ev{ts("2025-12-08T14:00:00Z"), ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{Title: ptr("CSS framework"), TaskID: ptr("T040"), Agent: &ckpt.Agent{ID: "technical", Name: "Devon"}},
			Steps: []ckpt.Step{{ID: "tokens", Status: ckpt.StepDone}, {ID: "grid", Status: ckpt.StepDone}},
			Acceptance: []ckpt.Criterion{
				{ID: "builds", Met: true}, {ID: "documented", Met: true},
			},
		}},
		ev{ts("2025-12-08T14:49:10Z"), ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone}},
	)
}

// t001 is seed 003's content task that has not started.
func t001(tb testing.TB) *ckpt.Checkpoint {
	c := fold(tb, "content-T001",
		ev{ts("2025-12-08T14:00:00Z"), ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{TaskID: ptr("T001"), Agent: &ckpt.Agent{ID: "content", Name: "Harper"}, Status: ptr(ckpt.StatusPending)},
		}},
	)
	// An imported seed file with no timestamps: never seen.
	c.UpdatedAt, c.StartedAt = time.Time{}, time.Time{}
	return c
}

// t062 is seed 003's scenario 3: marked complete with a criterion unmet.
func t062(tb testing.TB) *ckpt.Checkpoint {
	return fold(tb, "migration-T062",
		ev{ts("2025-12-08T13:00:00Z"), ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{Title: ptr("Catalogue wildlife images"), TaskID: ptr("T062"), Agent: &ckpt.Agent{ID: "migration", Name: "Riley"}},
			Steps: []ckpt.Step{{ID: "inventory", Status: ckpt.StepDone}, {ID: "metadata", Status: ckpt.StepDone}},
			Acceptance: []ckpt.Criterion{
				{ID: "85_images_catalogued", Title: "all 85 images catalogued"}, {ID: "index_written", Met: true},
			},
		}},
		ev{ts("2025-12-08T15:30:00Z"), ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusDone}},
	)
}

// blockedT060 is seed 003's "task blocked" example: a blocking error.
func blockedT060(tb testing.TB) *ckpt.Checkpoint {
	c := t060(tb)
	events := []ckpt.Event{
		ckpt.MustEvent(ckpt.EventError, ts("2025-12-08T14:53:00Z"), ckpt.Actor{}, ckpt.ErrorChange{
			Type: "dependency_missing", Message: "Cannot find source PDF: Post20English.pdf", Blocking: true,
		}),
		ckpt.MustEvent(ckpt.EventUpdate, ts("2025-12-08T14:53:30Z"), ckpt.Actor{}, ckpt.Patch{
			Instructions: ptr("Resolve missing PDF, then continue from post-20"),
		}),
	}
	for _, e := range events {
		e.Seq = c.Rev + 1
		var err error
		if c, err = ckpt.Apply(c.ID, c, e); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

// secondaryA is seed 002's example: no plan of steps, but completed steps,
// a current step in words, next steps and recovery instructions.
func secondaryA(tb testing.TB) *ckpt.Checkpoint {
	return fold(tb, "kai-7/secondary-a",
		ev{ts("2026-01-15T14:00:00Z"), ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{
				Title:        ptr("feature_01_player_json"),
				Agent:        &ckpt.Agent{ID: "Secondary-A", Type: "secondary"},
				Stage:        ptr("S2.P2"),
				Phase:        ptr("Specification"),
				CurrentStep:  ptr("Writing spec.md Requirements Section 5 (Error Handling)"),
				Instructions: ptr("Resume from S2.P2 Specification Phase. spec.md partially complete (70% done).\nContinue from Requirements Section 5."),
				NextSteps:    &[]string{"S2.P1 complete", "Complete Requirements Section 5", "Write Acceptance Criteria", "Create checklist.md questions"},
				FilesModified: []string{
					"feature_01_player_json/spec.md", "feature_01_player_json/checklist.md", "EPIC_README.md",
				},
			},
			Steps: []ckpt.Step{
				{ID: "S2.P1 complete", Status: ckpt.StepDone},
				{ID: "S2.P2 Phase 0: Read guide", Status: ckpt.StepDone},
				{ID: "S2.P2 Phase 1: Requirements Sections 1-4 written", Status: ckpt.StepDone},
			},
			Session: ckpt.Session{ID: "abc123def456", Number: 2},
		}},
		ev{ts("2026-01-15T14:30:00Z"), ckpt.EventDecision, ckpt.DecisionData{Text: "Use JSON Schema draft 2020-12"}},
	)
}

// cia42 is a seed 001 session: tasks, a decision, a blocker, a mode.
func cia42(tb testing.TB) *ckpt.Checkpoint {
	return fold(tb, "cia-42",
		ev{ts("2026-02-01T09:00:00Z"), ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{
				Title:  ptr("Add retry to the webhook sender"),
				TaskID: ptr("CIA-42"),
				Agent:  &ckpt.Agent{ID: "claude-code"},
				Meta:   map[string]json.RawMessage{"execution_mode": json.RawMessage(`"tdd"`)},
			},
			Steps: []ckpt.Step{
				{ID: "t1", Title: "Write failing test for retry", Status: ckpt.StepDone},
				{ID: "t2", Title: "Implement exponential backoff", Status: ckpt.StepInProgress, Notes: "backoff done, jitter left"},
				{ID: "t3", Title: "Wire config flag"},
				{ID: "t4", Title: "Update docs", Status: ckpt.StepFailed},
			},
		}},
		ev{ts("2026-02-01T09:20:00Z"), ckpt.EventDecision, ckpt.DecisionData{Text: "Cap retries at 5", Reason: "the receiver rate-limits after 6"}},
		ev{ts("2026-02-01T09:25:00Z"), ckpt.EventBlocker, ckpt.BlockerChange{Text: "Staging webhook endpoint is down (unblocked by: ops restoring staging)"}},
		ev{ts("2026-02-01T09:30:00Z"), ckpt.EventUpdate, ckpt.Patch{
			FilesCreated:  []string{"internal/webhook/retry_test.go"},
			FilesModified: []string{"internal/webhook/sender.go", "internal/webhook/retry_test.go"},
		}},
	)
}
