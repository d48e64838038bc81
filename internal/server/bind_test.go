package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// A client holding a token bound to kai-7 that claims to be "mallory"
// everywhere an event names an agent: the server records kai-7 in each
// place, and a listing by agent finds the work.
func TestAgentBoundTokenOverridesClaims(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	bound := f.client(t, f.token(t, server.ScopeWrite, "", "kai-7"))
	claim := ckpt.Actor{Agent: "mallory"}
	mallory := &ckpt.Agent{ID: "mallory", Name: "Mallory", Type: "claude-code"}
	title := "bound"
	steps := []ckpt.Step{{ID: "s1", Title: "one", By: "mallory"}, {ID: "s2", Title: "two", By: "subagent:reviewer"}}
	writes := []ckpt.Event{
		ckpt.MustEvent(ckpt.EventCreated, time.Time{}, claim, ckpt.Created{Patch: ckpt.Patch{Title: &title, Agent: mallory}, Steps: steps}),
		ckpt.MustEvent(ckpt.EventStep, time.Time{}, claim, ckpt.StepChange{ID: "s1", Status: ckpt.StepDone, By: "mallory"}),
		ckpt.MustEvent(ckpt.EventUpdate, time.Time{}, claim, ckpt.Patch{Agent: mallory}),
	}
	for _, e := range writes {
		if _, err := bound.Append(ctx, "w", e, ckpt.AppendOptions{}); err != nil {
			t.Fatalf("append %s: %v", e.Type, err)
		}
	}
	if _, err := ckpt.ResumeCheckpoint(ctx, bound, "w", ckpt.Lifecycle{Actor: claim}, mallory, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ckpt.TakeOverCheckpoint(ctx, bound, "w", *mallory, ckpt.Lifecycle{Actor: claim, Force: true}); err != nil {
		t.Fatal(err)
	}

	c, err := f.store.Get(ctx, "w", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.ID != "kai-7" || c.Agent.Type != "claude-code" {
		t.Errorf("checkpoint's agent %+v, want kai-7 (type claude-code kept)", c.Agent)
	}
	for _, s := range c.Steps {
		want := map[string]string{"s1": "kai-7", "s2": "subagent:reviewer"}[s.ID]
		if s.By != want {
			t.Errorf("step %s by %q, want %q", s.ID, s.By, want)
		}
	}
	h, err := f.store.History(ctx, "w", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h {
		if e.Actor.Agent != "kai-7" {
			t.Errorf("%s event's actor %q, want kai-7", e.Type, e.Actor.Agent)
		}
	}
	page, err := bound.List(ctx, ckpt.ListOptions{Filter: ckpt.Filter{Agent: "kai-7"}})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != "w" {
		t.Errorf("listing by the bound agent: %+v, %v", page.Items, err)
	}

	// A token bound to no agent records what the client says.
	free := f.client(t, f.token(t, server.ScopeWrite, "", ""))
	if _, err := free.Append(ctx, "free", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, claim, ckpt.Created{Patch: ckpt.Patch{Title: &title, Agent: mallory}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.store.Get(ctx, "free", 0); c.Agent.ID != "mallory" {
		t.Errorf("an unbound token's claim was changed: %+v", c.Agent)
	}
}
