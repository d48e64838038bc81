package storetest

import (
	"context"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

// testAsCheckpointAgent pins AppendOptions.AsCheckpointAgent: the event is
// recorded as the work of the checkpoint's agent as the append finds it
// (after a change of agent, the new one), in the result, the history and
// the state; without an agent on the checkpoint, or without the option,
// the event keeps its own actor; a create and a replayed key are not
// changed by it.
func testAsCheckpointAgent(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	asAgent := ckpt.AppendOptions{AsCheckpointAgent: true}
	person := func(e ckpt.Event) ckpt.Event {
		e.Actor = ckpt.Actor{Agent: "user:ana", Session: "s9"}
		return e
	}
	id := "owned"
	res, err := s.Append(ctx, id, person(event(0, ckpt.EventCreated, ckpt.Created{Patch: ckpt.Patch{Title: ptr("o"), Agent: &ckpt.Agent{ID: "kai"}}})), asAgent)
	if err != nil {
		t.Fatalf("create with AsCheckpointAgent: %v", err)
	}
	if res.Event.Actor.Agent != "user:ana" {
		t.Errorf("a create with AsCheckpointAgent is recorded as %q's; want the event's own actor user:ana", res.Event.Actor.Agent)
	}
	wantActor := func(what string, res ckpt.AppendResult, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if res.Event.Actor != (ckpt.Actor{Agent: want, Session: "s9"}) {
			t.Errorf("%s: the result's event is %+v's; want agent %q, session s9", what, res.Event.Actor, want)
		}
		h, err := s.History(ctx, res.State.ID, res.Event.Seq, 1)
		if err != nil || len(h) != 1 {
			t.Fatalf("%s: History: %v, %d events", what, err, len(h))
		}
		if h[0].Actor.Agent != want {
			t.Errorf("%s: the history records agent %q; want %q", what, h[0].Actor.Agent, want)
		}
	}
	res, err = s.Append(ctx, id, person(note(1, "by the agent")), asAgent)
	wantActor("a note with AsCheckpointAgent", res, err, "kai")
	res, err = s.Append(ctx, id, person(note(2, "by the person")), ckpt.AppendOptions{})
	wantActor("a note without it", res, err, "user:ana")
	res, err = s.Append(ctx, id, person(note(3, "again")), ckpt.AppendOptions{AsCheckpointAgent: true, IfRev: 3})
	wantActor("with IfRev too", res, err, "kai")

	// The agent as the append finds it: after a change, the new one.
	mustAppend(t, s, id, event(4, ckpt.EventUpdate, ckpt.Patch{Agent: &ckpt.Agent{ID: "lee"}}))
	first, err := s.Append(ctx, id, keyed(person(note(5, "after the change")), "k-agent"), asAgent)
	wantActor("after a change of agent", first, err, "lee")

	// A replay returns the first result, whatever the retry's options.
	again, err := s.Append(ctx, id, keyed(person(note(5, "after the change")), "k-agent"), ckpt.AppendOptions{})
	if err != nil || !again.Replayed || again.Event.Actor.Agent != "lee" || again.Event.Seq != first.Event.Seq {
		t.Errorf("a replayed key: %+v (seq %d), %v; want a replay of seq %d by lee", again.Event.Actor, again.Event.Seq, err, first.Event.Seq)
	}
	unchanged(t, s, id, first.Event.Seq)

	// No agent on the checkpoint: the event's own actor.
	create(t, s, "unowned", ckpt.Created{Patch: ckpt.Patch{Title: ptr("u")}})
	res, err = s.Append(ctx, "unowned", person(note(1, "nobody's")), asAgent)
	wantActor("a checkpoint without an agent", res, err, "user:ana")
}
