package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixtures are the real files of ../shared/fixtures/real/ this format reads.
var fixtures = []string{
	"progress-sync.feature-implementation-template.plan.md",
	"agent-squad.251121-1053-git-ops-optimization.plan.md",
	"agent-squad.251121-1053-git-ops-optimization.phase-01-quick-wins.md",
	"model-fallback_20260715.plan.md",
}

func importFile(t *testing.T, path string) protocols.Imported {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := Format{}.Import(path, data)
	if err != nil {
		t.Fatalf("Import(%s): %v", path, err)
	}
	if err := ckpt.ValidateID(im.ID); err != nil {
		t.Errorf("suggested ID: %v", err)
	}
	return im
}

// TestImportGolden imports every real fixture and compares the ID, the
// warnings and the checkpoint with testdata/golden/<fixture>.json.
func TestImportGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			im := importFile(t, filepath.Join("testdata", name))
			got, err := json.MarshalIndent(map[string]any{"id": im.ID, "warnings": im.Warnings, "state": im.State}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("import of %s differs from %s (-want +got):\n%s", name, golden, d)
			}
		})
	}
}

func warningWith(warnings []string, part string) bool {
	for _, w := range warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// TestImportFixtures states what each fixture must give, so that a golden
// file rewritten by -update cannot quietly accept a regression.
func TestImportFixtures(t *testing.T) {
	t.Run("template with markers", func(t *testing.T) {
		im := importFile(t, "testdata/progress-sync.feature-implementation-template.plan.md")
		c := im.State
		if im.ID != "progress-sync.feature-implementation-template" || len(c.Steps) != 19 || len(c.Acceptance) != 4 || c.Progress.Done != 0 {
			t.Errorf("ID %s, %d steps, %d criteria, %d done", im.ID, len(c.Steps), len(c.Acceptance), c.Progress.Done)
		}
		phases := map[string]int{}
		for _, s := range c.Steps {
			phases[s.Phase]++
		}
		want := map[string]int{"requirements": 5, "phase-1-name": 2, "phase-2-name": 2, "testing": 5, "finalization": 5}
		if d := cmp.Diff(want, phases); d != "" {
			t.Errorf("steps per phase (-want +got):\n%s", d)
		}
		// The guide at the end nests comments: its DECISION example is inside
		// the comment, its BLOCKER example is live Markdown.
		if len(c.Decisions) != 0 || len(c.Blockers) != 1 || c.Status != ckpt.StatusBlocked {
			t.Errorf("decisions %+v blockers %+v status %s", c.Decisions, c.Blockers, c.Status)
		}
		for _, w := range []string{"comments do not nest", "found 5 phase marker(s), 19 task(s) (0 checked), 4 acceptance criteria, 0 decision(s), 1 blocker(s)", "**Status:** Planning, which is no status"} {
			if !warningWith(im.Warnings, w) {
				t.Errorf("no warning with %q in %q", w, im.Warnings)
			}
		}
	})
	t.Run("real plan without markers or checkboxes", func(t *testing.T) {
		im := importFile(t, "testdata/agent-squad.251121-1053-git-ops-optimization.plan.md")
		c := im.State
		if im.ID != "251121-1053-git-ops-optimization" || len(c.Steps) != 0 || c.Status != ckpt.StatusPending || c.Title != "Git Operations MCP Server Optimization Plan" {
			t.Errorf("ID %s, %d steps, status %s, title %q", im.ID, len(c.Steps), c.Status, c.Title)
		}
		for _, w := range []string{"from its **Plan ID:** line", "no TASK markers, no checkboxes", "**Status:** Planning Complete"} {
			if !warningWith(im.Warnings, w) {
				t.Errorf("no warning with %q in %q", w, im.Warnings)
			}
		}
	})
	t.Run("phase file with checkboxes but no markers", func(t *testing.T) {
		im := importFile(t, "testdata/agent-squad.251121-1053-git-ops-optimization.phase-01-quick-wins.md")
		c := im.State
		if len(c.Steps) != 24 || c.Progress.Done != 9 || c.Status != ckpt.StatusInProgress {
			t.Errorf("%d steps, %d done, status %s", len(c.Steps), c.Progress.Done, c.Status)
		}
		if c.Steps[0].ID != "add-shallow-parameter-to-git-clone-tool-schema" || c.Steps[0].Title != "Add `shallow` parameter to git_clone tool schema" {
			t.Errorf("first step = %+v", c.Steps[0])
		}
		for _, w := range []string{"24 checkbox(es) (9 checked) imported as steps", "**Status:** ✅ COMPLETED but its checkboxes say in_progress (9 of 24 done)"} {
			if !warningWith(im.Warnings, w) {
				t.Errorf("no warning with %q in %q", w, im.Warnings)
			}
		}
	})
	t.Run("superpowers plan with Status lines", func(t *testing.T) {
		im := importFile(t, "testdata/model-fallback_20260715.plan.md")
		c := im.State
		if len(c.Steps) != 8 || c.Progress.Done != 8 || c.Status != ckpt.StatusDone {
			t.Fatalf("%d steps, %d done, status %s", len(c.Steps), c.Progress.Done, c.Status)
		}
		first, last := c.Steps[0], c.Steps[7]
		if first.ID != "task-1" || first.Phase != "phase-1" || first.Title != "Make existing tests hermetic + add `force_session_model`" || last.ID != "task-8" || last.Phase != "phase-7" {
			t.Errorf("steps %+v … %+v", first, last)
		}
		if !warningWith(im.Warnings, "8 task(s) (8 done) guessed from headings with a **Status:** line") {
			t.Errorf("warnings %q", im.Warnings)
		}
	})
}

func TestSuggestID(t *testing.T) {
	for _, c := range []struct{ path, id, parent string }{
		{"plans/260220-1149-feature/plan.md", "260220-1149-feature", ""},
		{"/abs/plans/260220-1149-feature/plan.md", "260220-1149-feature", ""},
		{"plans/251121-1053-git-ops/phase-01-quick-wins.md", "251121-1053-git-ops/phase-01-quick-wins", "251121-1053-git-ops"},
		{"docs/my plan (v2)/plan.md", "my-plan--v2-" + hashOf("my plan (v2)"), ""},
		{"plans/Süd/plan.md", "S-d-" + hashOf("Süd"), ""},
		{"plan.md", "plan", ""},
		{"notes/sprint.plan.md", "sprint", ""},
	} {
		id, parent, how := SuggestID(c.path, nil)
		if id != c.id || parent != c.parent || how == "" {
			t.Errorf("SuggestID(%q) = %q, %q, %q; want %q, %q", c.path, id, parent, how, c.id, c.parent)
		}
		if err := ckpt.ValidateID(id); err != nil {
			t.Errorf("SuggestID(%q): %v", c.path, err)
		}
	}
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// Plans in different directories never share a checkpoint, whatever
// characters their names have (issue 9: non-ASCII names were dropped).
func TestSuggestIDKeepsDirectoriesApart(t *testing.T) {
	names := []string{"Süd", "Såd", "S-d", "S d", "日本", "中国", "a b", "a-b", "a_b", "...", "plan", "plän", strings.Repeat("é", 120), strings.Repeat("è", 120)}
	seen := map[string]string{}
	for _, n := range names {
		id, _, _ := SuggestID(filepath.Join("plans", n, "plan.md"), nil)
		if err := ckpt.ValidateID(id); err != nil {
			t.Errorf("%q: %v", n, err)
		}
		if other, ok := seen[id]; ok {
			t.Errorf("%q and %q both map to %q", n, other, id)
		}
		seen[id] = n
	}
}

// markerView is what an Export → Import round trip must keep of a checkpoint.
type markerView struct {
	Steps      []ckpt.Step
	Acceptance []ckpt.Criterion
	Decisions  []string
	Blockers   []string
	Status     ckpt.Status
	Title      string
}

func viewOf(c *ckpt.Checkpoint) markerView {
	v := markerView{Status: c.Status, Title: c.Title}
	for _, s := range c.Steps {
		st := ckpt.StepPending
		if s.Status.Finished() {
			st = ckpt.StepDone
		}
		v.Steps = append(v.Steps, ckpt.Step{ID: s.ID, Title: s.Title, Phase: s.Phase, Status: st})
	}
	for _, a := range c.Acceptance {
		v.Acceptance = append(v.Acceptance, ckpt.Criterion{ID: a.ID, Title: a.Title, Met: a.Met})
	}
	for _, d := range c.Decisions {
		v.Decisions = append(v.Decisions, d.Text)
	}
	for _, b := range c.ActiveBlockers() {
		v.Blockers = append(v.Blockers, b.Text)
	}
	return v
}

func TestExportImportRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	made := &ckpt.Checkpoint{
		ID: "kai-7/feature", Title: "Feature with `code` and *emphasis*", Status: ckpt.StatusInProgress,
		Steps: []ckpt.Step{
			{ID: "loose", Title: "No phase yet", Status: ckpt.StepDone},
			{ID: "schema", Title: "Create schema — file: `db/schema.sql`", Phase: "setup", Status: ckpt.StepDone, CompletedAt: &at, By: "main"},
			{ID: "auth", Title: "Auth <!-- not a comment -->", Phase: "setup", Status: ckpt.StepInProgress},
			{ID: "docs", Phase: "finish", Status: ckpt.StepSkipped},
		},
		Acceptance: []ckpt.Criterion{{ID: "tests", Title: "Tests green", Met: true}},
		Decisions:  []ckpt.Decision{{At: at, Text: "Use PostgreSQL --> for JSON"}},
		Blockers:   []ckpt.Blocker{{ID: "b1", Text: "Waiting for the key", Since: at}, {ID: "b2", Text: "cleared one", Since: at, ClearedAt: &at}},
	}
	out, err := Format{}.Export(made)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Format{}.Import("plans/feature/plan.md", out)
	if err != nil {
		t.Fatal(err)
	}
	want := viewOf(made)
	want.Steps[2].Title = "Auth &lt;!-- not a comment -->"
	want.Steps[3].Title = "docs"
	want.Decisions[0] = "Use PostgreSQL -- > for JSON"
	want.Status = ckpt.StatusBlocked // the active blocker, and not every step is done
	if d := cmp.Diff(want, viewOf(back.State)); d != "" {
		t.Errorf("Export → Import (-want +got):\n%s\nplan.md:\n%s", d, out)
	}
	again, err := Format{}.Export(back.State)
	if err != nil {
		t.Fatal(err)
	}
	back2, _ := Format{}.Import("plans/feature/plan.md", again)
	if d := cmp.Diff(viewOf(back.State), viewOf(back2.State)); d != "" {
		t.Errorf("a second round trip changed the checkpoint (-first +second):\n%s", d)
	}

	// Import → Export keeps the markers, titles and fields of a real plan.
	tmpl := importFile(t, "testdata/progress-sync.feature-implementation-template.plan.md")
	out, err = Format{}.Export(tmpl.State)
	if err != nil {
		t.Fatal(err)
	}
	re, _ := Format{}.Import("x.md", out)
	if d := cmp.Diff(viewOf(tmpl.State), viewOf(re.State)); d != "" {
		t.Errorf("template Import → Export → Import (-want +got):\n%s", d)
	}
	if !bytes.Contains(out, []byte("**Date:** YYYY-MM-DD\n**Type:** Feature Implementation\n**Status:** Planning\n")) {
		t.Errorf("the plan's fields were not written back:\n%s", out)
	}
}

func TestExportRefusesBadFieldsMeta(t *testing.T) {
	c := &ckpt.Checkpoint{ID: "x", Meta: map[string]json.RawMessage{MetaFields: json.RawMessage(`"oops"`)}}
	if _, err := (Format{}).Export(c); err == nil || !strings.Contains(err.Error(), MetaFields) {
		t.Errorf("err = %v", err)
	}
}

func TestMirrorRendersACheckpointNotFromAPlan(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	c := &ckpt.Checkpoint{ID: "kai-7/feature", Title: "Feature", Status: ckpt.StatusInProgress, UpdatedAt: at,
		Steps: []ckpt.Step{{ID: "a", Title: "A", Phase: "one", Status: ckpt.StepDone, CompletedAt: &at, By: "subagent:db"}, {ID: "b", Title: "B", Phase: "one", Status: ckpt.StepPending}},
	}
	if err := (Format{}).Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(root, "plans", "kai-7", "feature", "plan.md")
	s := readStateFile(t, planPath)
	if a := s.Phases["one"].Tasks["a"]; !a.Done || !a.CompletedAt.Equal(at) || a.CompletedBy != "subagent:db" || s.PlanID != "feature" {
		t.Errorf("state.json: a = %+v, planId %q", a, s.PlanID)
	}
	// The same change mirrored again (by the process that made it and by a
	// server following the store) is one checkpoint, not two.
	if err := (Format{}).Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	if again := readStateFile(t, planPath); again.Ckpt.Checkpoints != s.Ckpt.Checkpoints {
		t.Errorf("mirroring one change twice counted %d checkpoints, want %d", again.Ckpt.Checkpoints, s.Ckpt.Checkpoints)
	}

	later := at.Add(time.Hour)
	c.Steps[1].Status, c.Steps[1].CompletedAt, c.Steps[1].By, c.UpdatedAt = ckpt.StepDone, &later, "main", later
	if err := (Format{}).Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(planPath)
	if !bytes.Contains(data, []byte("- [x] B <!-- TASK: b -->")) {
		t.Errorf("plan.md not re-rendered:\n%s", data)
	}
	lines := historyLines(t, planPath)
	if !strings.Contains(lines[len(lines)-2], `"event":"task_completed","taskId":"b","by":"main"`) || !strings.Contains(lines[len(lines)-1], `"phase_completed"`) {
		t.Errorf("history = %q", lines)
	}
	if b := readStateFile(t, planPath).Phases["one"].Tasks["b"]; !b.CompletedAt.Equal(later) {
		t.Errorf("b = %+v", b)
	}
}

func TestMirrorKeepsPlanMDAsSourceOfTruth(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plans", "p")
	os.MkdirAll(dir, 0o755)
	planPath := filepath.Join(dir, "plan.md")
	orig := "# P\n\nIntro text *kept* as is.\n\n- [ ] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n- [x] c <!-- TASK: c -->\n"
	os.WriteFile(planPath, []byte(orig), 0o644)
	res := mustSync(t, planPath, t0)
	c := res.Checkpoint

	// In ckpt: a is done, c is reopened. Meanwhile someone ticks b by hand
	// and unticks c in plan.md.
	at := t0.Add(time.Hour)
	c.Steps[0].Status, c.Steps[0].CompletedAt, c.Steps[0].By, c.UpdatedAt = ckpt.StepDone, &at, "subagent:x", at
	c.Steps[2].Status = ckpt.StepPending
	mustSetTask(t, planPath, "b", true)
	mustSetTask(t, planPath, "c", false)
	handEdited, _ := os.ReadFile(planPath)

	if err := (Format{}).Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(planPath)
	p := mustParse(t, string(got))
	if d := diffOffsets(t, handEdited, got); len(d) != 1 || d[0] != p.Tasks()[0].Box {
		t.Errorf("Mirror changed offsets %v, want only a's box", d)
	}
	want := []taskSummary{{ID: "a", Checked: true}, {ID: "b", Checked: true}, {ID: "c"}}
	if d := cmp.Diff(want, summarize(p.Tasks())); d != "" {
		t.Errorf("boxes after Mirror (-want +got):\n%s", d)
	}
	s := readStateFile(t, planPath)
	if a := s.Phases[UnphasedKey].Tasks["a"]; !a.CompletedAt.Equal(at) || a.CompletedBy != "subagent:x" {
		t.Errorf("a = %+v", a)
	}
	if s.Checksum != Checksum(got) {
		t.Error("state.json's checksum is not plan.md's")
	}
}
