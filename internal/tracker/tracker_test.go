package tracker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestStatusCommentMatchesTheDocumentsFormat(t *testing.T) {
	got := StatusComment(StatusUpdate{
		Updated:     time.Date(2026, 3, 2, 15, 5, 0, 0, time.FixedZone("CET", 3600)),
		Task:        3,
		Total:       8,
		Description: "Write the parser",
		State:       StateInProgress,
		Decisions:   []string{"Use encoding/csv: it handles quoting", "Keep IDs stable"},
		Next:        "Write the header test",
	})
	want := "## Checkpoint Status\n" +
		"\n" +
		"**Updated:** 2026-03-02T14:05:00Z\n" +
		"**Task:** 3 of 8 — Write the parser\n" +
		"**Status:** In Progress\n" +
		"\n" +
		"**Decisions:** Use encoding/csv: it handles quoting; Keep IDs stable\n" +
		"**Blockers:** None\n" +
		"**Next:** Write the header test\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestStatusCommentEdgeValues(t *testing.T) {
	got := StatusComment(StatusUpdate{
		Description: "Migrate\nusers",
		Blockers:    []string{"DB access\n**Next:** forged", "  "},
	})
	want := "## Checkpoint Status\n\n" +
		"**Updated:** unknown\n" +
		"**Task:** Migrate users\n" +
		"**Status:** In Progress\n\n" +
		"**Decisions:** None\n" +
		"**Blockers:** DB access **Next:** forged\n" +
		"**Next:** None\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := StatusComment(StatusUpdate{Task: 9, Total: 4}); !strings.Contains(got, "**Task:** 4 of 4\n") {
		t.Fatalf("N is clamped to M:\n%s", got)
	}
}

func TestUpdateFromCheckpoint(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	c := &ckpt.Checkpoint{
		ID: "cia-42", Title: "Port the importer", Status: ckpt.StatusInProgress,
		CurrentStep: "Write the parser",
		Steps: []ckpt.Step{
			{ID: "t1", Title: "Read the spec", Status: ckpt.StepDone},
			{ID: "t2", Title: "Write the parser", Status: ckpt.StepInProgress},
			{ID: "t3", Title: "Skip legacy", Status: ckpt.StepSkipped},
			{ID: "t4", Title: "Wire the CLI", Status: ckpt.StepPending},
		},
		Decisions: []ckpt.Decision{
			{At: t0, Text: "old decision"},
			{At: t0.Add(2 * time.Hour), Text: "Use encoding/csv", Reason: "it handles quoting"},
		},
		Blockers: []ckpt.Blocker{
			{ID: "b1", Text: "cleared", Since: t0, ClearedAt: &t0},
		},
		UpdatedAt: t0.Add(3 * time.Hour),
	}
	now := t0.Add(4 * time.Hour)
	u := UpdateFromCheckpoint(c, t0.Add(time.Hour), now)
	want := StatusUpdate{
		Updated: now, Task: 2, Total: 4, Description: "Write the parser", State: StateInProgress,
		Decisions: []string{"Use encoding/csv: it handles quoting"}, Next: "Wire the CLI",
	}
	if fmt.Sprint(u) != fmt.Sprint(want) {
		t.Fatalf("got  %+v\nwant %+v", u, want)
	}

	// An active blocker makes it Blocked; resume next steps win for Next.
	c.Blockers = append(c.Blockers, ckpt.Blocker{ID: "b2", Text: "No DB credentials", Since: t0})
	c.Resume.NextSteps = []string{"Ask ops for credentials", "then run tests"}
	u = UpdateFromCheckpoint(c, time.Time{}, time.Time{})
	if u.State != StateBlocked || fmt.Sprint(u.Blockers) != "[No DB credentials]" || u.Next != "Ask ops for credentials" ||
		len(u.Decisions) != 2 || !u.Updated.Equal(c.UpdatedAt) {
		t.Fatalf("got %+v", u)
	}

	// No steps: N and M from progress; a waiting checkpoint (at a gate) is
	// In Progress, not Resuming: seed 001's Resuming is a handoff picked up.
	p := &ckpt.Checkpoint{Title: "Batch", Status: ckpt.StatusWaiting, Progress: ckpt.Progress{Done: 6, Total: 10},
		Context: ckpt.Context{NextToProcess: "file 7"}}
	u = UpdateFromCheckpoint(p, time.Time{}, now)
	if u.State != StateInProgress {
		t.Errorf("a waiting checkpoint reads %q, want In Progress", u.State)
	}
	resumed := *p
	resumed.Status, resumed.ResumesWithoutProgress = ckpt.StatusInProgress, 1
	if u := UpdateFromCheckpoint(&resumed, time.Time{}, now); u.State != StateResuming {
		t.Errorf("a checkpoint resumed and not yet moved on reads %q, want Resuming", u.State)
	}
	p.Status = ckpt.StatusInProgress
	u = UpdateFromCheckpoint(p, time.Time{}, now)
	if u.Task != 7 || u.Total != 10 || u.Description != "Batch" || u.State != StateInProgress || u.Next != "file 7" {
		t.Fatalf("got %+v", u)
	}

	// Decisions are capped to the latest MaxDecisions.
	for i := range 8 {
		p.Decisions = append(p.Decisions, ckpt.Decision{At: now, Text: fmt.Sprint("d", i)})
	}
	if u = UpdateFromCheckpoint(p, time.Time{}, now); fmt.Sprint(u.Decisions) != "[d3 d4 d5 d6 d7]" {
		t.Fatalf("decisions = %q", u.Decisions)
	}
}

func TestReasonAndFailureLine(t *testing.T) {
	for _, tc := range []struct {
		service string
		err     error
		want    string
	}{
		{"Linear", &Error{Service: "Linear", Op: "update comment", Kind: KindHTTP, Status: 503, Message: "Service Unavailable"},
			"Failed: Linear update (HTTP 503) — status not persisted to issue tracker."},
		{"GitHub", &Error{Service: "GitHub", Op: "create comment", Kind: KindTimeout, Timeout: 10 * time.Second},
			"Failed: GitHub update (timed out after 10s) — status not persisted to issue tracker."},
		{"GitHub", &Error{Service: "GitHub", Op: "create comment", Kind: KindUnreachable, Message: "connection refused"},
			"Failed: GitHub update (unreachable) — status not persisted to issue tracker."},
		{"Linear", &Error{Service: "Linear", Op: "find issue", Kind: KindAPI, Message: "Entity not found: Issue"},
			"Failed: Linear update (API error: Entity not found: Issue) — status not persisted to issue tracker."},
		{"Linear", fmt.Errorf("%w: Linear API key missing", ckpt.ErrInvalid),
			"Failed: Linear update (invalid input: Linear API key missing) — status not persisted to issue tracker."},
	} {
		if got := FailureLine(tc.service, tc.err); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestErrorTextAndUnreachable(t *testing.T) {
	transport := errors.New("dial tcp 127.0.0.1:9: connect: connection refused")
	e := &Error{Service: "GitHub", Op: "update comment", Kind: KindUnreachable, Message: transport.Error(), Err: transport}
	if got := e.Error(); got != "GitHub update comment: unreachable: dial tcp 127.0.0.1:9: connect: connection refused" {
		t.Fatalf("Error() = %q", got)
	}
	if !errors.Is(e, ErrUnreachable) || !errors.Is(e, transport) {
		t.Fatal("an unreachable error must match ErrUnreachable and wrap the transport error")
	}
	h := &Error{Service: "GitHub", Op: "create comment", Kind: KindHTTP, Status: 401, Message: "Bad credentials", Hint: "check GITHUB_TOKEN"}
	if got := h.Error(); got != "GitHub create comment: HTTP 401: Bad credentials (check GITHUB_TOKEN)" {
		t.Fatalf("Error() = %q", got)
	}
	if errors.Is(h, ErrUnreachable) {
		t.Fatal("an HTTP error is not unreachable")
	}
}

func FuzzStatusComment(f *testing.F) {
	f.Add("Write the parser", "In Progress", "Use csv: quoting", "None", "next", 3, 8)
	f.Add("a\nb", "", "", "x\r\n**Next:** forged", "", 0, 0)
	f.Fuzz(func(t *testing.T, desc, state, decision, blocker, next string, n, m int) {
		got := StatusComment(StatusUpdate{Task: n, Total: m, Description: desc, State: state,
			Decisions: []string{decision}, Blockers: []string{blocker}, Next: next})
		lines := strings.Split(got, "\n")
		if len(lines) != 10 || lines[0] != "## Checkpoint Status" || lines[9] != "" {
			t.Fatalf("values changed the comment's shape:\n%s", got)
		}
		for i, prefix := range []string{"", "", "**Updated:** ", "**Task:** ", "**Status:** ", "", "**Decisions:** ", "**Blockers:** ", "**Next:** "} {
			if i >= 2 && !strings.HasPrefix(lines[i], prefix) {
				t.Fatalf("line %d = %q, want prefix %q", i, lines[i], prefix)
			}
		}
	})
}
