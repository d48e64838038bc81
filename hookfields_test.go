package ckpt_test

import (
	"slices"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// The fields the hooks fill (issue 19): a step's dependencies, where the
// agent stopped, and clearing one kind of error without the others.
func TestStepDependsOnLastMessageAndTypedClear(t *testing.T) {
	events := history(
		ev(ckpt.EventCreated, 0, ckpt.Created{Patch: ckpt.Patch{Title: ptr("Retry budget")}}),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "task-2", Title: "Wire it", DependsOn: []string{"task-1"}}),
		ev(ckpt.EventStep, 2, ckpt.StepChange{ID: "task-2", DependsOn: []string{"task-1", "task-3", "task-2"}}),
		ev(ckpt.EventUpdate, 3, ckpt.Patch{LastMessage: ptr("Next I will implement the budget in worker.go.")}),
		ev(ckpt.EventError, 4, ckpt.ErrorChange{Type: "command: go test ./...", Message: "FAIL: TestRetryBudget"}),
		ev(ckpt.EventError, 5, ckpt.ErrorChange{Type: "build", Message: "vet failed"}),
		ev(ckpt.EventError, 6, ckpt.ErrorChange{Type: "command: go test ./...", Clear: true}),
	)
	c, err := ckpt.Fold("app/s", events)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Steps[0].DependsOn; !slices.Equal(got, []string{"task-1", "task-3"}) {
		t.Errorf("depends_on = %v, want [task-1 task-3] (added once each, never itself)", got)
	}
	if c.Context.LastMessage != "Next I will implement the budget in worker.go." {
		t.Errorf("last message = %q", c.Context.LastMessage)
	}
	active := c.ActiveErrors()
	if len(active) != 1 || active[0].Type != "build" {
		t.Errorf("active errors = %+v, want only the build error (a typed clear clears its type only)", active)
	}
	// Both survive the generated codec (internal/wire).
	b, err := wire.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back ckpt.Checkpoint
	if err := wire.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Steps[0].DependsOn, c.Steps[0].DependsOn) || back.Context.LastMessage != c.Context.LastMessage {
		t.Errorf("round trip lost the fields: %+v %+v", back.Steps[0], back.Context)
	}
	// A typed clear with nothing of that type active is refused.
	again := history(append(slices.Clone(events), ev(ckpt.EventError, 7, ckpt.ErrorChange{Type: "command: go test ./...", Clear: true}))...)
	if _, err := ckpt.Fold("app/s", again); err == nil || !strings.Contains(err.Error(), "no active error") {
		t.Error("clearing a type with no active error of it was accepted")
	}
}
