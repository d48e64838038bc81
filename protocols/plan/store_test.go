package plan

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// interleavingStore appends one event of another writer (a hook running
// in parallel) right after the first read of checkpoint id it serves.
type interleavingStore struct {
	ckpt.Store
	id   string
	once sync.Once
	err  error
}

func (s *interleavingStore) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	c, err := s.Store.Get(ctx, id, rev)
	if err == nil && id == s.id {
		s.once.Do(func() {
			e := ckpt.MustEvent(ckpt.EventError, c.UpdatedAt, ckpt.Actor{Agent: "hook"}, ckpt.ErrorChange{Type: "test", Message: "written by a parallel hook"})
			_, s.err = s.Store.Append(ctx, id, e, ckpt.AppendOptions{})
		})
	}
	return c, err
}

// An event another writer appends between StoreSync's read and its write
// is kept: the overlay is made again over the newer state.
func TestStoreSyncKeepsAnEventWrittenDuringTheSync(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	p := &ckpt.Checkpoint{Title: "Plan", Status: ckpt.StatusInProgress, Steps: []ckpt.Step{{ID: "t1", Title: "one", Status: ckpt.StepDone}, {ID: "t2", Title: "two", Status: ckpt.StepPending}}}
	o := StoreOptions{Now: now, Actor: ckpt.Actor{Agent: "main"}, Source: "plans/p/plan.md"}
	if r, err := StoreSync(ctx, ms, "p", p, o); err != nil || !r.Stored || r.State.Rev != 1 {
		t.Fatalf("first sync: %+v %v", r, err)
	}
	p2 := p.Clone()
	p2.Steps[1].Status = ckpt.StepDone
	st := &interleavingStore{Store: ms, id: "p"}
	r, err := StoreSync(ctx, st, "p", p2, o)
	if err != nil || st.err != nil {
		t.Fatal(err, st.err)
	}
	c, _ := ms.Get(ctx, "p", 0)
	if len(c.Errors) != 1 || c.Errors[0].Message != "written by a parallel hook" {
		t.Errorf("the parallel hook's event was lost: errors %+v", c.Errors)
	}
	if c.Steps[1].Status != ckpt.StepDone || !r.Stored || r.State.Rev != 3 || c.Rev != 3 {
		t.Errorf("the sync's change: stored %v rev %d, steps %+v", r.Stored, c.Rev, c.Steps)
	}
	// --if-rev is the caller's revision, not the one read on a retry.
	o.IfRev = 1
	if _, err := StoreSync(ctx, ms, "p", p, o); ckpt.ErrorCode(err) != ckpt.CodeConflict {
		t.Errorf("if-rev 1 at rev 3: %v", err)
	}
}

// A checkpoint another writer creates while the plan is imported is not
// overwritten whole: the plan is laid over it.
func TestStoreSyncDoesNotOverwriteACheckpointCreatedMeanwhile(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	st := &creatingStore{Store: ms}
	p := &ckpt.Checkpoint{Title: "Plan", Status: ckpt.StatusInProgress, Steps: []ckpt.Step{{ID: "t1", Title: "one", Status: ckpt.StepPending}}}
	r, err := StoreSync(ctx, st, "p", p, StoreOptions{Now: now, Source: "plan.md"})
	if err != nil || !r.Stored {
		t.Fatalf("%+v %v", r, err)
	}
	c, _ := ms.Get(ctx, "p", 0)
	if c.Agent.ID != "other" || c.Title != "Plan" || len(c.Steps) != 1 {
		t.Errorf("state %+v", c)
	}
}

// creatingStore creates checkpoint p (agent "other") when it is first
// found missing.
type creatingStore struct {
	ckpt.Store
	once sync.Once
}

func (s *creatingStore) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	c, err := s.Store.Get(ctx, id, rev)
	if ckpt.ErrorCode(err) == ckpt.CodeNotFound {
		s.once.Do(func() {
			e := ckpt.MustEvent(ckpt.EventCreated, time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC), ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "other"}}})
			if _, aerr := s.Store.Append(ctx, id, e, ckpt.AppendOptions{}); aerr != nil {
				panic(aerr)
			}
		})
	}
	return c, err
}

func TestOverlayKeepsWhatThePlanDoesNotSay(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	cur := &ckpt.Checkpoint{
		ID: "p", Rev: 4, Status: ckpt.StatusInProgress, Agent: ckpt.Agent{ID: "A"}, Labels: []string{"x"},
		Files:  ckpt.Files{Modified: []string{"a.go"}},
		Errors: []ckpt.ErrorItem{{At: at, Message: "flaky"}},
		Steps: []ckpt.Step{
			{ID: "t1", Status: ckpt.StepInProgress, Output: "draft.md", Notes: "half"},
			{ID: "t2", Status: ckpt.StepSkipped},
			{ID: "gone", Status: ckpt.StepPending},
		},
		Decisions: []ckpt.Decision{{At: at, Text: "Recorded with ckpt"}},
		Blockers:  []ckpt.Blocker{{ID: "b1", Text: "Old blocker", Since: at}, {ID: "b2", Text: "Still there", Since: at}},
		Cycles:    ckpt.Cycles{Count: 1, Max: 3},
		Meta:      map[string]json.RawMessage{"other": json.RawMessage(`1`)},
	}
	p := &ckpt.Checkpoint{
		Title: "Plan", Status: ckpt.StatusBlocked, CurrentStep: "Task one",
		Steps: []ckpt.Step{
			{ID: "t1", Title: "Task one", Status: ckpt.StepPending},
			{ID: "t2", Title: "Task two", Status: ckpt.StepDone},
			{ID: "t3", Title: "Task three", Status: ckpt.StepPending},
		},
		Decisions: []ckpt.Decision{{Text: "From the plan"}, {Text: "Recorded with ckpt"}},
		Blockers:  []ckpt.Blocker{{ID: "b1", Text: "Still there"}, {ID: "b2", Text: "New one"}},
		Meta:      map[string]json.RawMessage{MetaPlan: json.RawMessage(`{"planId":"p"}`)},
	}
	now := at.Add(time.Hour)
	c := Overlay(cur, p, now)
	if c.Agent.ID != "A" || len(c.Files.Modified) != 1 || len(c.Errors) != 1 || c.Cycles.Count != 1 || len(c.Labels) != 1 || string(c.Meta["other"]) != "1" {
		t.Errorf("fields the plan does not carry were lost: %+v", c)
	}
	if len(c.Steps) != 3 || c.Steps[0].Status != ckpt.StepInProgress || c.Steps[0].Output != "draft.md" || c.Steps[0].Title != "Task one" ||
		c.Steps[1].Status != ckpt.StepSkipped || c.Steps[2].ID != "t3" {
		t.Errorf("steps %+v", c.Steps)
	}
	if c.CurrentStep != "Task one" || c.Title != "Plan" || c.Status != ckpt.StatusBlocked {
		t.Errorf("current %q title %q status %s", c.CurrentStep, c.Title, c.Status)
	}
	if len(c.Decisions) != 2 || c.Decisions[1].Text != "From the plan" || !c.Decisions[1].At.Equal(now) {
		t.Errorf("decisions %+v", c.Decisions)
	}
	var active []string
	for _, b := range c.ActiveBlockers() {
		active = append(active, b.ID+":"+b.Text)
	}
	if strings.Join(active, ",") != "b2:Still there,b3:New one" || c.Blockers[0].ClearedAt == nil || !c.Blockers[0].ClearedAt.Equal(now) {
		t.Errorf("blockers %+v (active %v)", c.Blockers, active)
	}
	if cur.Steps[0].Title != "" || len(cur.Blockers) != 2 || cur.Blockers[0].ClearedAt != nil {
		t.Error("overlayPlan changed the stored state it was given")
	}
	// A waiting checkpoint stays waiting until the plan is done.
	cur.Status, p.Status = ckpt.StatusWaiting, ckpt.StatusInProgress
	if c := Overlay(cur, p, now); c.Status != ckpt.StatusWaiting {
		t.Errorf("status %s, want waiting kept", c.Status)
	}
	p.Status = ckpt.StatusDone
	if c := Overlay(cur, p, now); c.Status != ckpt.StatusDone || c.CompletedAt == nil {
		t.Errorf("status %s completed %v, want done now", c.Status, c.CompletedAt)
	}
	// The result is a state Apply accepts.
	snap := ckpt.MustEvent(ckpt.EventSynced, now, ckpt.Actor{}, ckpt.Snapshot{State: *Overlay(cur, p, now)})
	snap.Seq = cur.Rev + 1
	if _, err := ckpt.Apply("p", cur.Clone(), snap); err != nil {
		t.Errorf("Apply refused the overlay: %v", err)
	}
}

// Recovering from a recovery.json older than the last checkpoint (a task
// was completed since it was saved) takes the completion from the history:
// task_completed is not logged again with a new time, and the store gets
// no second revision of what it has (issue 11, seed 004).
func TestRecoveryFromAnOlderRecoveryFileDoesNotRepeatCompletions(t *testing.T) {
	ctx := context.Background()
	ms := memstore.New()
	path := newPlan(t, "p", "- [ ] a <!-- TASK: a -->\n- [ ] b <!-- TASK: b -->\n")
	store := func(res *SyncResult, at time.Time) Stored {
		t.Helper()
		r, err := StoreSync(ctx, ms, res.ID, res.Checkpoint, StoreOptions{Now: at, Source: "plans/p/plan.md"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	store(mustSync(t, path, t0), t0) // recovery.json: a and b open
	mustSetTask(t, path, "a", true)
	t1 := t0.Add(time.Minute)
	store(mustSync(t, path, t1), t1) // a completed at t1; recovery.json not rewritten
	before, _ := ms.Get(ctx, "p", 0)
	if err := os.WriteFile(filepath.Join(cdirOf(path), stateFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	t2 := t1.Add(time.Minute)
	res := mustSync(t, path, t2)
	if slices.Contains(eventNames(res.Events), EventTaskCompleted) {
		t.Errorf("task_completed logged again: %v", eventNames(res.Events))
	}
	n := 0
	for _, l := range historyLines(t, path) {
		if strings.Contains(l, `"event":"task_completed"`) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d task_completed lines in history.jsonl, want 1", n)
	}
	if a := res.State.Phases[UnphasedKey].Tasks["a"]; a.CompletedAt == nil || !a.CompletedAt.Equal(t1) {
		t.Errorf("a's completion time %v, want %v", a.CompletedAt, t1)
	}
	if r := store(res, t2); r.Stored || r.State.Rev != before.Rev {
		t.Errorf("a duplicate revision was stored: rev %d after %d", r.State.Rev, before.Rev)
	}
}
