package ckpt_test

import (
	"errors"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestPercentRoundsOneWay(t *testing.T) {
	for _, c := range []struct{ done, total, want int }{
		{0, 3, 0}, {1, 3, 33}, {2, 3, 67}, {3, 3, 100},
		{1, 2, 50}, {1, 8, 13}, // 12.5 rounds half up
		{1, 1000, 1}, {999, 1000, 99}, {1, 400, 1}, {0, 0, 0}, {5, 0, 0}, {7, 5, 100},
	} {
		if got := ckpt.Percent(c.done, c.total); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.done, c.total, got, c.want)
		}
	}
}

func stepsFold(t *testing.T, events ...ckpt.Event) *ckpt.Checkpoint {
	t.Helper()
	c, err := ckpt.Fold("p/one", history(events...))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var threeSteps = ckpt.Created{Steps: []ckpt.Step{{ID: "research"}, {ID: "spec", Title: "Write the spec"}, {ID: "checklist"}}}

func TestPositionFollowsTheSteps(t *testing.T) {
	c := stepsFold(t,
		ev(ckpt.EventCreated, 0, threeSteps),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "research", Status: ckpt.StepInProgress}),
	)
	if got, want := c.Position(), (ckpt.Position{Step: 0, N: 1, M: 3, Done: 0, Percent: 0}); got != want {
		t.Fatalf("research started: %+v, want %+v", got, want)
	}
	if c.CurrentStep != "research" {
		t.Fatalf("current step %q after --start research", c.CurrentStep)
	}

	// Finishing the current step moves the current step on: every view
	// then says task 2 of 3, and none calls research current.
	c = stepsFold(t,
		ev(ckpt.EventCreated, 0, threeSteps),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "research", Status: ckpt.StepInProgress}),
		ev(ckpt.EventStep, 2, ckpt.StepChange{ID: "research", Status: ckpt.StepDone}),
	)
	if c.CurrentStep != "Write the spec" {
		t.Fatalf("current step %q after research is done, want the next pending step's title", c.CurrentStep)
	}
	if got, want := c.Position(), (ckpt.Position{Step: 1, N: 2, M: 3, Done: 1, Percent: 33}); got != want {
		t.Fatalf("after research: %+v, want %+v", got, want)
	}

	// A step in progress elsewhere wins over the first pending one.
	c = stepsFold(t,
		ev(ckpt.EventCreated, 0, threeSteps),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "checklist", Status: ckpt.StepInProgress}),
		ev(ckpt.EventStep, 2, ckpt.StepChange{ID: "research", Status: ckpt.StepDone}),
	)
	if p := c.Position(); p.N != 3 || p.Done != 1 || c.CurrentStep != "checklist" {
		t.Fatalf("checklist in progress: %+v, current %q", p, c.CurrentStep)
	}

	// The last step done: no current step, all done.
	c = stepsFold(t,
		ev(ckpt.EventCreated, 0, threeSteps),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "research", Status: ckpt.StepDone}),
		ev(ckpt.EventStep, 2, ckpt.StepChange{ID: "spec", Status: ckpt.StepSkipped}),
		ev(ckpt.EventStep, 3, ckpt.StepChange{ID: "checklist", Status: ckpt.StepInProgress}),
		ev(ckpt.EventStep, 4, ckpt.StepChange{ID: "checklist", Status: ckpt.StepDone}),
	)
	if p := c.Position(); p != (ckpt.Position{Step: -1, N: 0, M: 3, Done: 3, Percent: 100}) || !p.AllDone() || c.CurrentStep != "" {
		t.Fatalf("all done: %+v, current %q", p, c.CurrentStep)
	}

	// The agent's own current-step text naming no step stays.
	c = stepsFold(t,
		ev(ckpt.EventCreated, 0, threeSteps),
		ev(ckpt.EventUpdate, 1, ckpt.Patch{CurrentStep: ptr("reading the API docs")}),
		ev(ckpt.EventStep, 2, ckpt.StepChange{ID: "research", Status: ckpt.StepDone}),
	)
	if c.CurrentStep != "reading the API docs" || c.Position().N != 2 {
		t.Fatalf("free text: current %q, %+v", c.CurrentStep, c.Position())
	}
}

func TestPositionWithoutSteps(t *testing.T) {
	c := stepsFold(t,
		ev(ckpt.EventCreated, 0, ckpt.Created{}),
		ev(ckpt.EventUpdate, 1, ckpt.Patch{Progress: &ckpt.ProgressSet{Done: 120, Total: 500}}),
	)
	if got, want := c.Position(), (ckpt.Position{Step: -1, N: 121, M: 500, Done: 120, Percent: 24}); got != want {
		t.Fatalf("%+v, want %+v", got, want)
	}
	c = stepsFold(t, ev(ckpt.EventCreated, 0, ckpt.Created{}), ev(ckpt.EventStatus, 1, ckpt.StatusChange{Status: ckpt.StatusDone}))
	if got, want := c.Position(), (ckpt.Position{Step: -1, Percent: 100}); got != want {
		t.Fatalf("done without a count: %+v, want %+v", got, want)
	}
}

func TestStepMustExistSuggests(t *testing.T) {
	events := history(
		ev(ckpt.EventCreated, 0, threeSteps),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "reserch", Status: ckpt.StepDone, MustExist: true}),
	)
	_, err := ckpt.Fold("p/one", events)
	var nf *ckpt.StepNotFoundError
	if !errors.As(err, &nf) || !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("a typo in an existing-step change: %v, want a StepNotFoundError wrapping ErrInvalid", err)
	}
	if len(nf.Suggest) != 1 || nf.Suggest[0] != "research" || !strings.Contains(err.Error(), `did you mean "research"?`) {
		t.Fatalf("suggestion: %v (%q)", nf.Suggest, err)
	}
	events[1] = ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "deploy", Status: ckpt.StepDone, MustExist: true})
	events[1].Seq = 2
	if _, err := ckpt.Fold("p/one", events); err == nil || !strings.Contains(err.Error(), `its steps are "research", "spec", "checklist"`) {
		t.Fatalf("nothing close: %v", err)
	}
	// Without MustExist (older histories, adapters) a new step is added.
	events[1] = ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "deploy"})
	events[1].Seq = 2
	c, err := ckpt.Fold("p/one", events)
	if err != nil || len(c.Steps) != 4 {
		t.Fatalf("adding a step: %v, %d steps", err, len(c.Steps))
	}
}

func TestCheckProgressPatch(t *testing.T) {
	c := stepsFold(t, ev(ckpt.EventCreated, 0, threeSteps))
	err := ckpt.CheckProgressPatch(c, ckpt.Patch{Progress: &ckpt.ProgressSet{Done: 2, Total: 3}})
	if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "derived from them") {
		t.Fatalf("progress on a checkpoint with steps: %v", err)
	}
	c = stepsFold(t, ev(ckpt.EventCreated, 0, ckpt.Created{}))
	if err := ckpt.CheckProgressPatch(c, ckpt.Patch{Progress: &ckpt.ProgressSet{Done: 2, Total: 3}}); err != nil {
		t.Fatalf("no steps: %v", err)
	}
}
