package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestAsCheckpointAgentAcrossStores: AppendOptions.AsCheckpointAgent takes
// the agent of the checkpoint as it is in the database, on both paths: a
// Store that never wrote the checkpoint (the locking path), and one whose
// remembered state names an agent another Store has since replaced (the
// fast path misses and the locking path decides).
func TestAsCheckpointAgentAcrossStores(t *testing.T) {
	ctx := context.Background()
	s1, dsn := openStore(t)
	defer s1.Close()
	s2 := openSecond(t, dsn)
	asAgent := ckpt.AppendOptions{AsCheckpointAgent: true}
	byAna := func(text string) ckpt.Event {
		return ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{Agent: "user:ana"}, ckpt.Note{Text: text})
	}
	title := "x"
	mustAppend(t, s1, "x", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "test"},
		ckpt.Created{Patch: ckpt.Patch{Title: &title, Agent: &ckpt.Agent{ID: "kai"}}}))
	if r, err := s1.Append(ctx, "x", byAna("s1, fast"), asAgent); err != nil || r.Event.Actor.Agent != "kai" {
		t.Fatalf("s1 (fast path): %+v, %v; want kai's", r.Event.Actor, err)
	}
	if n := pgstore.FastAppends(s1); n != 1 {
		t.Fatalf("fast appends: %d, want 1", n)
	}
	if r, err := s2.Append(ctx, "x", byAna("s2, locking"), asAgent); err != nil || r.Event.Actor.Agent != "kai" {
		t.Fatalf("s2 (locking path): %+v, %v; want kai's", r.Event.Actor, err)
	}
	mustAppend(t, s2, "x", ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "test"}, ckpt.Patch{Agent: &ckpt.Agent{ID: "lee"}}))
	r, err := s1.Append(ctx, "x", byAna("s1, remembering kai"), asAgent)
	if err != nil || r.Event.Actor.Agent != "lee" || r.Event.Seq != 5 {
		t.Fatalf("s1 after s2 changed the agent: %+v seq %d, %v; want lee's at seq 5", r.Event.Actor, r.Event.Seq, err)
	}
	h := verified(t, s1, "x")
	if h.Agent.ID != "lee" {
		t.Errorf("the checkpoint's agent is %q; want lee", h.Agent.ID)
	}
}
