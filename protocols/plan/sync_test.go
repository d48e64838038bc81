package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	ckpt "github.com/ckpt-dev/ckpt"
)

const samplePlan = `# Feature X

**Status:** In Progress

## Phase 1: Setup
<!-- CHECKPOINT: phase-1-setup -->

- [x] Create database schema <!-- TASK: db-schema -->
- [ ] Setup auth middleware <!-- TASK: auth-middleware -->

**Acceptance Criteria**:
- [ ] All migrations pass <!-- ACCEPT: migrations -->

## Phase 2: API
<!-- CHECKPOINT: phase-2-api -->

- [ ] Write handlers <!-- TASK: handlers -->

<!-- DECISION: Using async SQLAlchemy 2.0 for better performance -->
<!-- BLOCKER: Waiting for API key from external team -->
`

var t0 = time.Date(2026, 2, 20, 11, 49, 0, 0, time.UTC)

// newPlan writes content as <tmp>/plans/<id>/plan.md and returns its path.
func newPlan(t *testing.T, id, content string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "plans", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan.md")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func cdirOf(planPath string) string { return filepath.Join(filepath.Dir(planPath), CheckpointDir) }

func mustSync(t *testing.T, planPath string, at time.Time, opts ...Option) *SyncResult {
	t.Helper()
	res, err := Sync(planPath, at, opts...)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	return res
}

func mustSetTask(t *testing.T, planPath, id string, done bool) {
	t.Helper()
	if err := SetTask(planPath, id, done); err != nil {
		t.Fatalf("SetTask(%s, %v): %v", id, done, err)
	}
}

func readStateFile(t *testing.T, planPath string) *State {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cdirOf(planPath), stateFile))
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeState(b)
	if err != nil {
		t.Fatalf("state.json: %v\n%s", err, b)
	}
	return s
}

func readRecoveryFile(t *testing.T, planPath string) *Recovery {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cdirOf(planPath), recoveryFile))
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRecovery(b)
	if err != nil {
		t.Fatalf("recovery.json: %v", err)
	}
	return r
}

func historyLines(t *testing.T, planPath string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cdirOf(planPath), historyFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func eventNames(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Event)
	}
	return out
}

func TestSyncEndToEnd(t *testing.T) {
	path := newPlan(t, "260220-1149-feature", samplePlan)
	abs, _ := filepath.Abs(path)

	res := mustSync(t, path, t0)
	if d := cmp.Diff([]string{EventCheckpointCreated}, eventNames(res.Events)); d != "" {
		t.Errorf("first sync events (-want +got):\n%s", d)
	}
	if res.ID != "260220-1149-feature" || res.RecoverySaved != EventCheckpointCreated {
		t.Errorf("ID %q, recovery %q", res.ID, res.RecoverySaved)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "1 task(s) were already checked") }) {
		t.Errorf("no warning about the unknown completion time: %q", res.Warnings)
	}
	lines := historyLines(t, path)
	if want := `{"ts":"2026-02-20T11:49:00Z","event":"checkpoint_created","planId":"260220-1149-feature"}`; len(lines) != 1 || lines[0] != want {
		t.Errorf("history = %q, want the document's first line %s", lines, want)
	}

	// The state file holds exactly the document's keys (plus ckpt's own).
	raw, _ := os.ReadFile(filepath.Join(cdirOf(path), stateFile))
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	wantKeys := []string{"agents", "blockers", "checksum", "ckpt", "currentPhase", "currentTask", "decisions", "lastCheckpoint", "phases", "planId", "planPath", "progress", "sessionNotes", "version"}
	if d := cmp.Diff(wantKeys, keys); d != "" {
		t.Errorf("state.json keys (-want +got):\n%s", d)
	}
	data, _ := os.ReadFile(path)
	phase1, currentTask := "phase-1-setup", "auth-middleware"
	want := &State{
		Version: 2, PlanID: "260220-1149-feature", PlanPath: abs, LastCheckpoint: t0, Checksum: Checksum(data),
		Progress: StateProgress{TotalTasks: 3, CompletedTasks: 1, Percentage: 33.3},
		Phases: map[string]*PhaseState{
			"phase-1-setup": {Status: PhaseInProgress,
				Tasks:      map[string]*TaskState{"db-schema": {Done: true}, "auth-middleware": {}},
				Acceptance: map[string]*CriterionState{"migrations": {}}},
			"phase-2-api": {Status: PhasePending, Tasks: map[string]*TaskState{"handlers": {}}, Acceptance: map[string]*CriterionState{}},
		},
		CurrentPhase: &phase1, CurrentTask: &currentTask,
		Blockers:  []string{"Waiting for API key from external team"},
		Decisions: []DecisionEntry{{Time: t0, Decision: "Using async SQLAlchemy 2.0 for better performance"}},
		Agents:    map[string]*AgentState{},
		Ckpt:      &Bookkeeping{Checkpoints: 1, BlockersSince: map[string]time.Time{"Waiting for API key from external team": t0}},
	}
	if d := cmp.Diff(want, readStateFile(t, path)); d != "" {
		t.Errorf("state.json after the first sync (-want +got):\n%s", d)
	}
	if r := readRecoveryFile(t, path); r.Reason != EventCheckpointCreated || !r.SavedAt.Equal(t0) || r.State.Checksum != Checksum(data) {
		t.Errorf("recovery.json = %+v", r)
	}

	// A subagent ticks a box: the document's checksum_mismatch, then task_completed with by.
	mustSetTask(t, path, "auth-middleware", true)
	t1 := t0.Add(3 * time.Minute)
	res = mustSync(t, path, t1, CompletedBy("subagent:fullstack"))
	if d := cmp.Diff([]string{EventChecksumMismatch, EventTaskCompleted, EventPhaseCompleted}, eventNames(res.Events)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	lines = historyLines(t, path)
	data, _ = os.ReadFile(path)
	wantLines := []string{
		`{"ts":"2026-02-20T11:52:00Z","event":"checksum_mismatch","action":"reparse","stateChecksum":"` + want.Checksum + `","planChecksum":"` + Checksum(data) + `"}`,
		`{"ts":"2026-02-20T11:52:00Z","event":"task_completed","taskId":"auth-middleware","by":"subagent:fullstack"}`,
		`{"ts":"2026-02-20T11:52:00Z","event":"phase_completed","phaseId":"phase-1-setup"}`,
	}
	if d := cmp.Diff(wantLines, lines[1:]); d != "" {
		t.Errorf("history lines (-want +got):\n%s", d)
	}
	s := readStateFile(t, path)
	ph := s.Phases["phase-1-setup"]
	if got := ph.Tasks["auth-middleware"]; !got.Done || !got.CompletedAt.Equal(t1) || got.CompletedBy != "subagent:fullstack" {
		t.Errorf("auth-middleware = %+v", got)
	}
	if ph.Tasks["db-schema"].CompletedAt != nil {
		t.Error("db-schema was checked before tracking began but got a completion time")
	}
	if ph.Status != PhaseCompleted || !ph.CompletedAt.Equal(t1) || !ph.StartedAt.Equal(t1) {
		t.Errorf("phase 1 = %+v", ph)
	}
	if a := s.Agents["subagent:fullstack"]; a == nil || a.Type != "fullstack" || !slices.Equal(a.CompletedTasks, []string{"auth-middleware"}) || !a.LastActive.Equal(t1) {
		t.Errorf("agents = %+v", s.Agents)
	}
	if *s.CurrentPhase != "phase-2-api" || *s.CurrentTask != "handlers" || s.Progress.Percentage != 66.7 {
		t.Errorf("current %s/%s progress %+v", *s.CurrentPhase, *s.CurrentTask, s.Progress)
	}
	if r := readRecoveryFile(t, path); r.Reason != EventPhaseCompleted || !r.SavedAt.Equal(t1) {
		t.Errorf("recovery.json after a phase completed: reason %q at %v", r.Reason, r.SavedAt)
	}

	// The criterion and a sync with nothing new: times stay, nothing is logged.
	mustSetTask(t, path, "migrations", true)
	t2 := t1.Add(time.Minute)
	res = mustSync(t, path, t2)
	if d := cmp.Diff([]string{EventChecksumMismatch, EventAcceptanceMet}, eventNames(res.Events)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	t3 := t2.Add(time.Minute)
	res = mustSync(t, path, t3, SessionNotes("stopped before the handlers"))
	if len(res.Events) != 0 || res.RecoverySaved != "" {
		t.Errorf("an unchanged plan logged %v, recovery %q", eventNames(res.Events), res.RecoverySaved)
	}
	s = readStateFile(t, path)
	if !s.LastCheckpoint.Equal(t3) || !s.Phases["phase-1-setup"].Tasks["auth-middleware"].CompletedAt.Equal(t1) ||
		!s.Phases["phase-1-setup"].Acceptance["migrations"].VerifiedAt.Equal(t2) || *s.SessionNotes != "stopped before the handlers" {
		t.Errorf("state after a quiet sync: %+v", s)
	}

	// The checkpoint for ckpt to store.
	c := res.Checkpoint
	if c.ID != "260220-1149-feature" || c.Title != "Feature X" || c.Status != ckpt.StatusBlocked || c.Progress.Done != 2 || c.Progress.Total != 3 {
		t.Errorf("checkpoint = %s %q %s %+v", c.ID, c.Title, c.Status, c.Progress)
	}
	wantSteps := []ckpt.Step{
		{ID: "db-schema", Title: "Create database schema", Status: ckpt.StepDone, Phase: "phase-1-setup"},
		{ID: "auth-middleware", Title: "Setup auth middleware", Status: ckpt.StepDone, Phase: "phase-1-setup", CompletedAt: &t1, By: "subagent:fullstack"},
		{ID: "handlers", Title: "Write handlers", Status: ckpt.StepPending, Phase: "phase-2-api"},
	}
	if d := cmp.Diff(wantSteps, c.Steps); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
	if len(c.Acceptance) != 1 || !c.Acceptance[0].Met || !c.Acceptance[0].VerifiedAt.Equal(t2) || c.Phase != "phase-2-api" || c.CurrentStep != "Write handlers" {
		t.Errorf("acceptance %+v, phase %q, step %q", c.Acceptance, c.Phase, c.CurrentStep)
	}
	if len(c.Blockers) != 1 || !c.Blockers[0].Since.Equal(t0) || len(c.Decisions) != 1 || !c.Decisions[0].At.Equal(t0) || c.Context.Notes != "stopped before the handlers" {
		t.Errorf("blockers %+v decisions %+v notes %q", c.Blockers, c.Decisions, c.Context.Notes)
	}
	synced := ckpt.MustEvent(ckpt.EventSynced, t3, ckpt.Actor{}, ckpt.Snapshot{State: *c})
	synced.Seq = 2
	if _, err := ckpt.Apply(c.ID, &ckpt.Checkpoint{ID: c.ID, Rev: 1, Status: ckpt.StatusInProgress}, synced); err != nil {
		t.Errorf("the checkpoint does not apply as a synced snapshot: %v", err)
	}

	// Unticking takes the completion back, and the agent's credit with it.
	mustSetTask(t, path, "auth-middleware", false)
	res = mustSync(t, path, t3.Add(time.Minute))
	if d := cmp.Diff([]string{EventChecksumMismatch, EventTaskReopened}, eventNames(res.Events)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	s = readStateFile(t, path)
	if got := s.Phases["phase-1-setup"]; got.Tasks["auth-middleware"].CompletedAt != nil || got.Status != PhaseInProgress || got.CompletedAt != nil {
		t.Errorf("after unticking: %+v", got)
	}
	if a := s.Agents["subagent:fullstack"]; len(a.CompletedTasks) != 0 {
		t.Errorf("agent still credited: %+v", a)
	}
}

func TestSyncRecoveryEveryFifthCheckpoint(t *testing.T) {
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n")
	var saved []int
	for i := 1; i <= 11; i++ {
		res := mustSync(t, path, t0.Add(time.Duration(i)*time.Minute))
		if res.RecoverySaved != "" {
			saved = append(saved, i)
			r := readRecoveryFile(t, path)
			if r.State.Ckpt.Checkpoints != i || !r.SavedAt.Equal(t0.Add(time.Duration(i)*time.Minute)) {
				t.Errorf("checkpoint %d: recovery.json holds checkpoint %d saved %v", i, r.State.Ckpt.Checkpoints, r.SavedAt)
			}
			if i%5 == 0 && r.Reason != "every_5_checkpoints" {
				t.Errorf("checkpoint %d: reason %q", i, r.Reason)
			}
		}
	}
	if d := cmp.Diff([]int{1, 5, 10}, saved); d != "" {
		t.Errorf("recovery.json written at checkpoints (-want +got):\n%s", d)
	}
	res := mustSync(t, path, t0.Add(time.Hour), RecoveryPoint("pre_subagent_spawn"))
	if r := readRecoveryFile(t, path); res.RecoverySaved != "pre_subagent_spawn" || r.Reason != "pre_subagent_spawn" {
		t.Errorf("forced recovery point: %q / %q", res.RecoverySaved, r.Reason)
	}
}

func TestSyncChecksumMismatchReparses(t *testing.T) {
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n")
	first := mustSync(t, path, t0)
	edited := "- [ ] a <!-- TASK: a -->\n- [x] b, added by hand <!-- TASK: b -->\n"
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustSync(t, path, t0.Add(time.Minute))
	want := Event{TS: t0.Add(time.Minute), Event: EventChecksumMismatch, Action: "reparse", StateChecksum: first.State.Checksum, PlanChecksum: Checksum([]byte(edited))}
	if len(res.Events) == 0 || !cmp.Equal(res.Events[0], want) {
		t.Fatalf("events = %+v, want first %+v", res.Events, want)
	}
	if s := readStateFile(t, path); s.Checksum != want.PlanChecksum || s.Progress.TotalTasks != 2 || !s.Phases[UnphasedKey].Tasks["b"].Done {
		t.Errorf("state not re-parsed: %+v", s)
	}
	// Load sees the same: a state whose checksum matches is returned as stored.
	got, events, err := load(path)
	if err != nil || len(events) != 0 || got.Checksum != want.PlanChecksum || !got.LastCheckpoint.Equal(t0.Add(time.Minute)) {
		t.Errorf("Load = %+v, %v, %v", got, events, err)
	}
	if err := os.WriteFile(path, []byte(edited+"- [x] c <!-- TASK: c -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, events, err = load(path)
	if err != nil || len(events) != 1 || events[0].Event != EventChecksumMismatch || events[0].Action != "reparse" {
		t.Fatalf("Load after an edit: events %+v, err %v", events, err)
	}
	if c := got.Phases[UnphasedKey].Tasks["c"]; !c.Done || c.CompletedAt != nil || got.Progress.TotalTasks != 3 {
		t.Errorf("Load did not re-derive, or invented a time: %+v", got.Phases[UnphasedKey].Tasks)
	}
	if s := readStateFile(t, path); s.Progress.TotalTasks != 2 {
		t.Error("Load wrote state.json")
	}
}

func TestSyncParseFailureKeepsLastState(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"invalid UTF-8": func(path string) error {
			return os.WriteFile(path, []byte("- [x] a \xff\xfe <!-- TASK: a -->\n"), 0o644)
		},
		"missing":     os.Remove,
		"a directory": func(path string) error { os.Remove(path); return os.Mkdir(path, 0o755) },
	} {
		t.Run(name, func(t *testing.T) {
			path := newPlan(t, "p", "- [x] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n")
			mustSync(t, path, t0)
			before, _ := os.ReadFile(filepath.Join(cdirOf(path), stateFile))
			if err := damage(path); err != nil {
				t.Fatal(err)
			}
			res := mustSync(t, path, t0.Add(time.Minute))
			if res.PlanError == nil || res.Checkpoint != nil || res.State == nil || res.State.Progress.CompletedTasks != 1 {
				t.Fatalf("result = %+v", res)
			}
			if d := cmp.Diff([]string{EventParseError}, eventNames(res.Events)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			lines := historyLines(t, path)
			var e map[string]any
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil || e["event"] != "parse_error" || e["fallback"] != "state.json" || e["error"] == "" {
				t.Errorf("last history line = %s", lines[len(lines)-1])
			}
			after, _ := os.ReadFile(filepath.Join(cdirOf(path), stateFile))
			if !bytes.Equal(before, after) {
				t.Error("state.json changed although plan.md could not be read")
			}
			got, events, err := load(path)
			if err != nil || got.Progress.CompletedTasks != 1 || len(events) != 1 || events[0].Fallback != "state.json" {
				t.Errorf("Load = %+v, %+v, %v", got, events, err)
			}
		})
	}
}

func TestSyncParseFailureWithNothingToFallBackTo(t *testing.T) {
	path := newPlan(t, "p", "bad \xff\n")
	if _, err := Sync(path, t0); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") || !strings.Contains(err.Error(), "no .checkpoint") {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(cdirOf(path)); err == nil {
		t.Error("a failed first sync created .checkpoint")
	}
	if _, _, err := load(path); err == nil {
		t.Error("Load of an unreadable plan with no state succeeded")
	}
}

func TestSyncStateCorruptRestoresFromRecovery(t *testing.T) {
	for name, damage := range map[string]string{"invalid JSON": `{"version":2,"planId":`, "empty": "", "wrong version": `{"version":1}`, "wrong shape": `{"version":2,"phases":[]}`} {
		t.Run(name, func(t *testing.T) {
			path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n")
			mustSync(t, path, t0)
			mustSetTask(t, path, "a", true)
			t1 := t0.Add(time.Minute)
			mustSync(t, path, t1, RecoveryPoint("pre_subagent_spawn"))
			if err := os.WriteFile(filepath.Join(cdirOf(path), stateFile), []byte(damage), 0o644); err != nil {
				t.Fatal(err)
			}
			got, events, err := load(path)
			if err != nil || len(events) != 2 || events[0].Event != EventStateCorrupted || events[0].RestoredFrom != FromRecovery {
				t.Fatalf("Load: events %+v, err %v", events, err)
			}
			if a := got.Phases[UnphasedKey].Tasks["a"]; !a.CompletedAt.Equal(t1) {
				t.Errorf("Load lost a's completion time: %+v", a)
			}

			t2 := t1.Add(time.Minute)
			res := mustSync(t, path, t2)
			if d := cmp.Diff([]string{EventStateCorrupted, EventSessionRecovered}, eventNames(res.Events)); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			var e map[string]any
			lines := historyLines(t, path)
			json.Unmarshal([]byte(lines[len(lines)-2]), &e)
			if e["event"] != "state_corrupted" || e["restored_from"] != "recovery.json" {
				t.Errorf("logged %s", lines[len(lines)-2])
			}
			if !strings.Contains(lines[len(lines)-1], `"event":"session_recovered","from":"recovery.json","tasksRestored":1`) {
				t.Errorf("logged %s", lines[len(lines)-1])
			}
			if res.Recovered != FromRecovery || res.RecoverySaved != EventStateCorrupted {
				t.Errorf("recovered %q, saved %q", res.Recovered, res.RecoverySaved)
			}
			s := readStateFile(t, path)
			if a := s.Phases[UnphasedKey].Tasks["a"]; !a.CompletedAt.Equal(t1) || s.Ckpt.Checkpoints != 3 {
				t.Errorf("restored state: a %+v, checkpoints %d", a, s.Ckpt.Checkpoints)
			}
		})
	}
}

func TestSyncBothCorruptReparsesPlan(t *testing.T) {
	path := newPlan(t, "p", "<!-- CHECKPOINT: one -->\n- [ ] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n<!-- CHECKPOINT: two -->\n- [ ] c <!-- TASK: c -->\n")
	mustSync(t, path, t0)
	mustSetTask(t, path, "a", true)
	mustSetTask(t, path, "b", true)
	t1 := t0.Add(time.Minute)
	mustSync(t, path, t1, CompletedBy("team:t1"))
	mustSetTask(t, path, "c", true)
	mustSync(t, path, t1.Add(time.Minute))
	mustSetTask(t, path, "c", false) // reopened: the history's completion of c no longer holds
	mustSync(t, path, t1.Add(2*time.Minute))
	for _, f := range []string{stateFile, recoveryFile} {
		if err := os.WriteFile(filepath.Join(cdirOf(path), f), []byte("\x00garbage"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t2 := t1.Add(time.Hour)
	res := mustSync(t, path, t2)
	if d := cmp.Diff([]string{EventFullRecovery}, eventNames(res.Events)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if e := res.Events[0]; e.Source != FromReparse || !strings.Contains(e.Error, "state.json") || !strings.Contains(e.Error, "recovery.json") {
		t.Errorf("full_recovery = %+v", e)
	}
	if !strings.Contains(historyLines(t, path)[len(historyLines(t, path))-1], `"event":"full_recovery","source":"plan.md_reparse"`) {
		t.Error("full_recovery not logged as the document says")
	}
	s := readStateFile(t, path)
	one := s.Phases["one"]
	if a := one.Tasks["a"]; !a.Done || !a.CompletedAt.Equal(t1) || a.CompletedBy != "team:t1" {
		t.Errorf("a's completion was not taken from history: %+v", a)
	}
	if !one.CompletedAt.Equal(t1) || one.Status != PhaseCompleted {
		t.Errorf("phase one = %+v", one)
	}
	if c := s.Phases["two"].Tasks["c"]; c.Done || c.CompletedAt != nil {
		t.Errorf("c = %+v", c)
	}
	// The agents map keeps who completed what (issue 23: a subagent's
	// credit was lost after a full recovery).
	if a := s.Agents["team:t1"]; a == nil || !slices.Equal(a.CompletedTasks, []string{"a", "b"}) || !a.LastActive.Equal(t1) {
		t.Errorf("agents after a full recovery: %+v", s.Agents)
	}
	if r := readRecoveryFile(t, path); r.Reason != EventFullRecovery {
		t.Errorf("recovery.json reason %q", r.Reason)
	}
	// The same when both files are gone but the history shows there was a state.
	os.Remove(filepath.Join(cdirOf(path), stateFile))
	os.Remove(filepath.Join(cdirOf(path), recoveryFile))
	res = mustSync(t, path, t2.Add(time.Minute))
	if d := cmp.Diff([]string{EventFullRecovery}, eventNames(res.Events)); d != "" {
		t.Errorf("with both files gone (-want +got):\n%s", d)
	}
}

func TestSyncParseFailureAndStateCorrupt(t *testing.T) {
	path := newPlan(t, "p", "- [x] a <!-- TASK: a -->\n")
	mustSync(t, path, t0)
	os.WriteFile(filepath.Join(cdirOf(path), stateFile), []byte("{"), 0o644)
	os.WriteFile(path, []byte("\xff"), 0o644)
	res := mustSync(t, path, t0.Add(time.Minute))
	if d := cmp.Diff([]string{EventStateCorrupted, EventSessionRecovered, EventParseError}, eventNames(res.Events)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	if res.Events[2].Fallback != FromRecovery {
		t.Errorf("parse_error fallback = %q", res.Events[2].Fallback)
	}
	if s := readStateFile(t, path); s.Progress.CompletedTasks != 1 {
		t.Errorf("state.json not restored from recovery.json: %+v", s)
	}

	os.WriteFile(filepath.Join(cdirOf(path), stateFile), []byte("{"), 0o644)
	os.WriteFile(filepath.Join(cdirOf(path), recoveryFile), []byte("{"), 0o644)
	_, err := Sync(path, t0.Add(2*time.Minute))
	if err == nil || !strings.Contains(err.Error(), "no usable state") || !strings.Contains(err.Error(), "restore plan.md") {
		t.Errorf("err = %v", err)
	}
	lines := historyLines(t, path)
	if !strings.Contains(lines[len(lines)-1], `"event":"parse_error","fallback":"none"`) {
		t.Errorf("last line = %s", lines[len(lines)-1])
	}
}

func TestSyncRefusesAnotherPlansState(t *testing.T) {
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n")
	mustSync(t, path, t0)
	other := filepath.Join(filepath.Dir(path), "phase-01.md")
	os.WriteFile(other, []byte("- [ ] x <!-- TASK: x -->\n"), 0o644)
	if _, err := Sync(other, t0); err == nil || !strings.Contains(err.Error(), "belongs to") {
		t.Errorf("err = %v", err)
	}
}

func TestSyncClosesATornHistoryLine(t *testing.T) {
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n")
	mustSync(t, path, t0)
	f, _ := os.OpenFile(filepath.Join(cdirOf(path), historyFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"ts":"2026-02-20T11:50:00Z","event":"task_comp`)
	f.Close()
	mustSetTask(t, path, "a", true)
	mustSync(t, path, t0.Add(time.Minute))
	events, bad, err := ReadHistory(filepath.Join(cdirOf(path), historyFile))
	if err != nil || bad != 1 {
		t.Fatalf("ReadHistory: bad %d, err %v", bad, err)
	}
	if d := cmp.Diff([]string{EventCheckpointCreated, EventChecksumMismatch, EventTaskCompleted, EventPhaseCompleted}, eventNames(events)); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
}

func TestStateKeepsUnknownKeys(t *testing.T) {
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n")
	mustSync(t, path, t0)
	sp := filepath.Join(cdirOf(path), stateFile)
	raw, _ := os.ReadFile(sp)
	raw = bytes.Replace(raw, []byte(`"version": 2,`), []byte(`"version": 2, "pluginVersion": "1.4.0", "custom": {"x": [1, 2]},`), 1)
	os.WriteFile(sp, raw, 0o644)
	mustSync(t, path, t0.Add(time.Minute))
	s := readStateFile(t, path)
	var custom bytes.Buffer
	json.Compact(&custom, s.Extra["custom"])
	if string(s.Extra["pluginVersion"]) != `"1.4.0"` || custom.String() != `{"x":[1,2]}` {
		t.Errorf("extra = %q", s.Extra)
	}
}

func TestSyncConcurrentWritersAreSerialised(t *testing.T) {
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n- [ ] c <!-- TASK: c -->\n")
	const n = 6
	errs := make(chan error, 2*n)
	for i := 0; i < n; i++ {
		go func(i int) {
			_, err := Sync(path, t0.Add(time.Duration(i)*time.Second))
			errs <- err
		}(i)
		go func(i int) {
			errs <- SetTask(path, string(rune('a'+i%3)), true)
		}(i)
	}
	for i := 0; i < 2*n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	final := mustSync(t, path, t0.Add(time.Hour))
	s := readStateFile(t, path)
	if s.Ckpt.Checkpoints != n+1 || s.Progress.CompletedTasks != 3 {
		t.Errorf("checkpoints %d (want %d), completed %d", s.Ckpt.Checkpoints, n+1, s.Progress.CompletedTasks)
	}
	events, bad, err := ReadHistory(filepath.Join(cdirOf(path), historyFile))
	if err != nil || bad != 0 {
		t.Fatalf("history: bad %d, err %v", bad, err)
	}
	created, completed := 0, map[string]int{}
	for _, e := range events {
		switch e.Event {
		case EventCheckpointCreated:
			created++
		case EventTaskCompleted:
			completed[e.TaskID]++
		}
	}
	// A task checked before the first sync ran has no completion event;
	// none is ever logged twice.
	for id, k := range completed {
		if k != 1 {
			t.Errorf("task %s completed %d times in the history", id, k)
		}
	}
	// The final sync logs what boxes were ticked after the last concurrent
	// sync (the goroutines finish in any order), never a second creation.
	if created != 1 || slices.Contains(eventNames(final.Events), EventCheckpointCreated) {
		t.Errorf("checkpoint_created %d times; final sync logged %v", created, eventNames(final.Events))
	}
}

func TestAppendEventsWritesTheDocumentsLines(t *testing.T) {
	path := newPlan(t, "p", "- [ ] auth <!-- TASK: auth -->\n")
	one := 1
	err := appendEvents(path,
		Event{TS: t0, Event: EventSubagentStarted, AgentType: "fullstack", Tasks: []string{"auth"}},
		Event{TS: t0.Add(time.Minute), Event: EventSubagentStopped, AgentType: "fullstack", Completed: &one})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"ts":"2026-02-20T11:49:00Z","event":"subagent_started","agentType":"fullstack","tasks":["auth"]}`,
		`{"ts":"2026-02-20T11:50:00Z","event":"subagent_stopped","agentType":"fullstack","completed":1}`,
	}
	if d := cmp.Diff(want, historyLines(t, path)); d != "" {
		t.Errorf("history (-want +got):\n%s", d)
	}
	if err := appendEvents(path, Event{TS: t0}); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("an unnamed event: %v", err)
	}
	if len(historyLines(t, path)) != 2 {
		t.Error("a refused append wrote a line")
	}
	// The first Sync after them still starts the bookkeeping: the history
	// holds no state, so this is a first checkpoint, not a lost one.
	res := mustSync(t, path, t0.Add(2*time.Minute))
	if d := cmp.Diff([]string{EventCheckpointCreated}, eventNames(res.Events)); d != "" {
		t.Errorf("first sync after subagent lines (-want +got):\n%s", d)
	}
}
