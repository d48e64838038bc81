package plan

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const assignPlan = `# Feature plan

<!-- CHECKPOINT: phase-1-setup -->
## Phase 1: Setup

- [x] Create database schema <!-- TASK: db-schema -->
- [ ] Setup auth middleware <!-- TASK: auth -->
- [ ] Write the API client <!-- TASK: auth-client -->
- [ ] Docs <!-- TASK: docs -->
`

// TestTasksNamedIn: a subagent's brief names the open tasks it was given,
// by ID as a whole word or by title; a done task, a longer ID that
// contains another and a short title alone name nothing.
func TestTasksNamedIn(t *testing.T) {
	p, err := Parse([]byte(assignPlan))
	if err != nil {
		t.Fatal(err)
	}
	for brief, want := range map[string][]string{
		"Implement TASK auth in src/auth.ts":               {"auth"},
		"setup AUTH middleware, then write the api client": {"auth", "auth-client"},
		"Fix auth-client only":                             {"auth-client"},
		"Create database schema again (db-schema)":         nil,
		"Docs": nil,
		"docs": {"docs"},
		"":     nil,
	} {
		if got := TasksNamedIn(p, brief); !slices.Equal(got, want) {
			t.Errorf("TasksNamedIn(%q) = %v, want %v", brief, got, want)
		}
	}
}

// TestSyncAssignsTasks: AssignTo adds the tasks to the agent's
// assignedTasks in state.json (the seed's agents map), once each, and a
// later sync keeps them beside what the agent completed.
func TestSyncAssignsTasks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plans", "feat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan.md")
	if err := os.WriteFile(path, []byte(assignPlan), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 2, 20, 12, 5, 0, 0, time.UTC)
	for i := 0; i < 2; i++ {
		if _, err := Sync(path, t0, AssignTo("subagent:fullstack", []string{"auth"})); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, []byte(strings.Replace(assignPlan, "- [ ] Setup auth", "- [x] Setup auth", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Sync(path, t0.Add(10*time.Minute), CompletedBy("subagent:fullstack"))
	if err != nil {
		t.Fatal(err)
	}
	a := res.State.Agents["subagent:fullstack"]
	if a == nil || !slices.Equal(a.AssignedTasks, []string{"auth"}) || !slices.Equal(a.CompletedTasks, []string{"auth"}) || a.Type != "fullstack" {
		t.Fatalf("agents[subagent:fullstack] = %+v, want auth assigned once and completed", a)
	}
	if !a.LastActive.Equal(t0.Add(10 * time.Minute)) {
		t.Errorf("lastActive %v, want the completion's time", a.LastActive)
	}
}

// FuzzTasksNamedIn: whatever the brief, only open tasks of the plan are
// named, each once, in plan order.
func FuzzTasksNamedIn(f *testing.F) {
	f.Add(assignPlan, "Implement TASK auth and the API client")
	f.Add("- [ ] a <!-- TASK: a -->\n- [ ] a <!-- TASK: a -->\n", "a a")
	f.Fuzz(func(t *testing.T, src, brief string) {
		p, err := Parse([]byte(src))
		if err != nil {
			return
		}
		var open []string
		for _, it := range p.Tasks() {
			if !it.Checked && it.ID != "" && !slices.Contains(open, it.ID) {
				open = append(open, it.ID)
			}
		}
		got := TasksNamedIn(p, brief)
		last := -1
		for i, id := range got {
			at := slices.Index(open, id)
			if at < 0 || slices.Contains(got[:i], id) || at < last {
				t.Fatalf("TasksNamedIn named %q (open tasks %v, got %v)", id, open, got)
			}
			last = at
		}
	})
}
