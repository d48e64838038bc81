package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/plan"
)

const testPlan = `# Feature: auth

## Phase 1: Setup
<!-- CHECKPOINT: phase-1 -->

- [ ] Create database schema <!-- TASK: db-schema -->
- [X] Setup auth middleware <!-- TASK: auth -->
- [ ] All migrations pass <!-- ACCEPT: migrations -->

<!-- DECISION: Use async SQLAlchemy -->
<!-- BLOCKER: Waiting for API key -->
`

func (env *importEnv) planOptions(path string) *PlanOptions {
	return &PlanOptions{writeOptions: writeOptions{common: env.common(), Actor: ckpt.Actor{Agent: "main-agent"}}, WorkDir: env.dir, Path: path, By: "main"}
}

func TestPlanSyncStoresThePlanAndOnlyChanges(t *testing.T) {
	env := newImportEnv(t)
	path := env.write("plans/feat/plan.md", []byte(testPlan))
	ctx := context.Background()
	if err := runPlanSync(ctx, env.planOptions(path)); err != nil {
		t.Fatal(err)
	}
	if want := "synced plans/feat/plan.md: feat  rev 1  imported  (1/2, 50%, blocked)\n  wrote recovery.json (checkpoint_created)\n"; env.out.String() != want {
		t.Errorf("output %q, want %q", env.out.String(), want)
	}
	c, err := env.store.Get(ctx, "feat", 0)
	if err != nil || len(c.Steps) != 2 || c.Steps[1].Status != ckpt.StepDone || len(c.Acceptance) != 1 || len(c.Decisions) != 1 || len(c.ActiveBlockers()) != 1 {
		t.Fatalf("stored %v %+v", err, c)
	}
	var meta struct{ PlanPath, Checksum string }
	json.Unmarshal(c.Meta[plan.MetaPlan], &meta)
	if meta.PlanPath != filepath.Join(env.dir, path) || !strings.HasPrefix(meta.Checksum, "sha256:") {
		t.Errorf("plan meta %+v", meta)
	}
	if s, err := os.ReadFile(filepath.Join(env.dir, "plans/feat/.checkpoint/state.json")); err != nil || !bytes.Contains(s, []byte(`"version": 2`)) {
		t.Errorf("state.json: %v\n%s", err, s)
	}

	// Nothing changed: nothing stored.
	env.now = env.now.Add(time.Minute)
	if err := runPlanSync(ctx, env.planOptions(path)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(env.out.String(), "feat unchanged at rev 1") {
		t.Errorf("second sync: %q", env.out.String())
	}

	// A box ticked in plan.md: a synced event, with the task's author.
	o := env.planOptions("")
	o.TaskID, o.Done, o.By, o.JSON = "db-schema", true, "subagent:fullstack", true
	if err := runPlanTick(ctx, o); err != nil {
		t.Fatal(err)
	}
	var rep plan.Report
	if err := json.Unmarshal(env.out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, env.out.String())
	}
	if !rep.Stored || rep.Rev != 2 || strings.Join(rep.NewlyCompleted, ",") != "db-schema" || !strings.Contains(strings.Join(rep.History, ","), "task_completed") {
		t.Errorf("report %+v", rep)
	}
	c, _ = env.store.Get(ctx, "feat", 0)
	if c.Steps[0].Status != ckpt.StepDone || c.Steps[0].By != "subagent:fullstack" || c.Status != ckpt.StatusDone {
		t.Errorf("after check: %+v", c.Steps)
	}
	if !c.UpdatedAt.Equal(env.now) {
		t.Errorf("a sync that changed something is dated %s, want now %s", c.UpdatedAt, env.now)
	}
}

func TestPlanCheckChangesOneByte(t *testing.T) {
	env := newImportEnv(t)
	path := env.write("plan.md", []byte(testPlan))
	o := env.planOptions("")
	o.TaskID, o.Done = "migrations", true
	if err := runPlanTick(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(env.dir, path))
	want := strings.Replace(testPlan, "- [ ] All migrations pass", "- [x] All migrations pass", 1)
	if string(got) != want {
		t.Errorf("plan.md after check:\n%s", got)
	}
	// An unknown ID: exit 3, the file untouched.
	o = env.planOptions("")
	o.TaskID, o.Done = "nope", true
	err := runPlanTick(context.Background(), o)
	if ExitCode(err) != ExitNotFound || !strings.Contains(err.Error(), "db-schema, auth, migrations") {
		t.Errorf("unknown task: %v (exit %d)", err, ExitCode(err))
	}
	if again, _ := os.ReadFile(filepath.Join(env.dir, path)); !bytes.Equal(again, got) {
		t.Error("plan.md changed by a refused check")
	}
	// A --by the sync would refuse: refused before the box is ticked.
	o = env.planOptions("")
	o.TaskID, o.Done, o.By = "db-schema", true, "someone"
	if err := runPlanTick(context.Background(), o); ExitCode(err) != ExitUsage {
		t.Errorf("a bad --by: %v (exit %d)", err, ExitCode(err))
	}
	if again, _ := os.ReadFile(filepath.Join(env.dir, path)); !bytes.Equal(again, got) {
		t.Error("plan.md changed by a check whose sync was refused")
	}
}

func TestPlanSyncKeepsTheLastStateWhenPlanIsUnreadable(t *testing.T) {
	env := newImportEnv(t)
	path := env.write("plans/p/plan.md", []byte(testPlan))
	ctx := context.Background()
	if err := runPlanSync(ctx, env.planOptions(path)); err != nil {
		t.Fatal(err)
	}
	env.write("plans/p/plan.md", []byte("# broken\x00"))
	if err := runPlanSync(ctx, env.planOptions(path)); err != nil {
		t.Fatalf("the error chain falls back, it does not fail: %v", err)
	}
	if !strings.Contains(env.errOut.String(), "the last known state was kept and nothing was stored") || !strings.Contains(env.out.String(), "nothing stored") {
		t.Errorf("stdout %q stderr %q", env.out.String(), env.errOut.String())
	}
	if c, _ := env.store.Get(ctx, "p", 0); c.Rev != 1 {
		t.Errorf("rev %d after a parse failure", c.Rev)
	}
	hist, _ := os.ReadFile(filepath.Join(env.dir, "plans/p/.checkpoint/history.jsonl"))
	if !bytes.Contains(hist, []byte(`"event":"parse_error","fallback":"state.json"`)) {
		t.Errorf("history:\n%s", hist)
	}
}

func TestFindPlan(t *testing.T) {
	env := newImportEnv(t)
	o := env.planOptions("")
	if _, err := o.findPlan(context.Background()); ExitCode(err) != ExitUsage {
		t.Errorf("no plan: %v", err)
	}
	env.write("plans/a/plan.md", []byte(testPlan))
	if p, err := o.findPlan(context.Background()); err != nil || p != filepath.Join("plans", "a", "plan.md") {
		t.Errorf("one plan: %q %v", p, err)
	}
	env.write("plans/b/plan.md", []byte(testPlan))
	if _, err := o.findPlan(context.Background()); err == nil || !strings.Contains(err.Error(), "2 plans/*/plan.md found") {
		t.Errorf("two plans: %v", err)
	}
	// --id names the plan the checkpoint was synced from.
	if err := runPlanSync(context.Background(), env.planOptions("plans/b/plan.md")); err != nil {
		t.Fatal(err)
	}
	o.ID = "b"
	if p, err := o.findPlan(context.Background()); err != nil || p != filepath.Join(env.dir, "plans", "b", "plan.md") {
		t.Errorf("by --id: %q %v", p, err)
	}
	env.write("plan.md", []byte(testPlan))
	o.ID = ""
	if p, err := o.findPlan(context.Background()); err != nil || p != "plan.md" {
		t.Errorf("plan.md here: %q %v", p, err)
	}
}
