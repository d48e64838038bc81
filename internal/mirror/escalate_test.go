package mirror

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
)

func agentStart(id, agent string) ckpt.Event {
	title := "Feature 02"
	cr := ckpt.Created{Patch: ckpt.Patch{Title: &title, Agent: &ckpt.Agent{ID: agent}}}
	return ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, cr)
}

// TestEscalateWritesSeed002sWarningAndStaleLine: an agent silent more than
// 30 whole minutes gets the document's CHECKPOINT WARNING in its inbox,
// one silent more than 60 the EPIC_README.md line "STALE (likely
// crashed)"; each once per silence; 30 minutes exactly is not yet late.
func TestEscalateWritesSeed002sWarningAndStaleLine(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: agentcheckpoints.Name, Root: ".", Prefix: "kai-7/"})
	ctx := context.Background()
	if _, err := m.Append(ctx, "kai-7/secondary_a", agentStart("kai-7/secondary_a", "Secondary-A"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	primary := ckpt.Created{Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "Agent-Primary", Type: "primary"}}}
	if _, err := m.Append(ctx, "kai-7/primary", ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, primary), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := os.Stat(InboxPath(env.project, "primary.json")); err == nil {
			t.Error("the Primary warned itself: only secondaries are checked")
		}
	}()
	inbox := InboxPath(env.project, "secondary_a.json")
	epic := env.path(EpicReadme)
	if n := m.Escalate(ctx, t0.Add(30*time.Minute+59*time.Second)); n != 0 {
		t.Fatalf("30 whole minutes is not more than 30: wrote %d", n)
	}
	if n := m.Escalate(ctx, t0.Add(31*time.Minute)); n != 1 {
		t.Fatalf("at 31 minutes: wrote %d files, want the inbox", n)
	}
	msg := read(t, inbox)
	for _, want := range []string{
		"## Message 1 (2026-01-15 15:01) ⏳ UNREAD\n",
		"**Subject:** CHECKPOINT WARNING - No Update in 30 Minutes\n",
		"**Details:** Your last checkpoint was at 14:30 (31 minutes ago)\n",
		"         Expected checkpoint every 15 minutes\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("inbox lacks %q:\n%s", want, msg)
		}
	}
	if _, err := os.Stat(epic); err == nil {
		t.Errorf("EPIC_README.md written at 31 minutes")
	}
	if n := m.Escalate(ctx, t0.Add(45*time.Minute)); n != 0 || strings.Count(read(t, inbox), "CHECKPOINT WARNING") != 1 {
		t.Errorf("the warning was sent again for the same silence (%d files)", n)
	}
	if n := m.Escalate(ctx, t0.Add(61*time.Minute)); n != 2 {
		t.Fatalf("at 61 minutes: wrote %d files, want EPIC_README.md and the agent's file", n)
	}
	if got := read(t, epic); !strings.Contains(got, "Secondary-A: STALE (likely crashed)") {
		t.Errorf("EPIC_README.md:\n%s", got)
	}
	// The agent's file records when EPIC_README.md was updated about it;
	// its last_checkpoint still shows the silence.
	file := read(t, env.path(agentcheckpoints.Dir, "secondary_a.json"))
	if !strings.Contains(file, `"last_epic_readme_update": "2026-01-15T15:31:00Z"`) || !strings.Contains(file, `"last_checkpoint": "2026-01-15T14:30:00Z"`) {
		t.Errorf("agent file after the stale line:\n%s", file)
	}
	m.Escalate(ctx, t0.Add(90*time.Minute))
	if strings.Count(read(t, epic), "STALE") != 1 {
		t.Errorf("the stale line was written twice:\n%s", read(t, epic))
	}
	// A new silence after a checkpoint is warned again, numbered on.
	beat := t0.Add(100 * time.Minute)
	if err := m.Beat(ctx, "kai-7/secondary_a", ckpt.Signal{At: beat}); err != nil {
		t.Fatal(err)
	}
	m.Escalate(ctx, beat.Add(40*time.Minute))
	if got := read(t, inbox); !strings.Contains(got, "## Message 2 (") || strings.Count(got, "CHECKPOINT WARNING") != 2 {
		t.Errorf("second silence:\n%s", got)
	}
}

// TestEscalateMarksStatusStalled: seed 003's supervisor flags a row warning
// after 10 minutes and stalled after 30 in STATUS.md, with no write to the
// store; a task not started shows "—" as its last update.
func TestEscalateMarksStatusStalled(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: sitebuilder.Name, Root: "."})
	ctx := context.Background()
	if _, err := m.Append(ctx, "migration-T060", agentStart("migration-T060", "migration"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(ctx, "migration-T060", ckpt.MustEvent(ckpt.EventStatus, t0, ckpt.Actor{}, ckpt.StatusChange{Status: ckpt.StatusInProgress}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(ctx, "content-T001", agentStart("content-T001", "content"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(ctx, "content-T001", ckpt.MustEvent(ckpt.EventStatus, t0, ckpt.Actor{}, ckpt.StatusChange{Status: ckpt.StatusPending}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	status := env.path("progress", "STATUS.md")
	m.Escalate(ctx, t0.Add(11*time.Minute))
	if got := read(t, status); !strings.Contains(got, "| migration | Feature 02 | 0% | 11 min ago | in_progress (warning) |") {
		t.Errorf("at 11 minutes:\n%s", got)
	}
	m.Escalate(ctx, t0.Add(25*time.Minute))
	if got := read(t, status); strings.Contains(got, "(stalled)") {
		t.Errorf("stalled at 25 minutes, the seed says 30:\n%s", got)
	}
	m.Escalate(ctx, t0.Add(31*time.Minute))
	got := read(t, status)
	if !strings.Contains(got, "| migration | Feature 02 | 0% | 31 min ago | in_progress (stalled) |") {
		t.Errorf("at 31 minutes:\n%s", got)
	}
	if !strings.Contains(got, "| content | Feature 02 | 0% | — |") {
		t.Errorf("a task not started shows a time:\n%s", got)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
