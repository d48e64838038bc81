package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// TestAsCheckpointAgentOverHTTP: the server honours
// AppendOptions.AsCheckpointAgent (the Ckpt-As-Agent header ckpt's client
// sends), but not for a token bound to an agent, whose writes are its
// agent's whatever the checkpoint's agent is.
func TestAsCheckpointAgentOverHTTP(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	title := "owned"
	free := f.client(t, f.token(t, server.ScopeWrite, "", ""))
	create := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "user:ana"}, ckpt.Created{Patch: ckpt.Patch{Title: &title, Agent: &ckpt.Agent{ID: "kai"}}})
	if _, err := free.Append(ctx, "o", create, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	byAna := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "user:ana"}, ckpt.Note{Text: "n"})
	asAgent := ckpt.AppendOptions{AsCheckpointAgent: true}
	res, err := free.Append(ctx, "o", byAna, asAgent)
	if err != nil || res.Event.Actor.Agent != "kai" {
		t.Fatalf("unbound token with AsCheckpointAgent: %+v, %v; want kai's", res.Event.Actor, err)
	}
	bound := f.client(t, f.token(t, server.ScopeWrite, "", "lee"))
	res, err = bound.Append(ctx, "o", byAna, asAgent)
	if err != nil || res.Event.Actor.Agent != "lee" {
		t.Fatalf("token bound to lee with AsCheckpointAgent: %+v, %v; want lee's", res.Event.Actor, err)
	}
	h, err := f.store.History(ctx, "o", 2, 0)
	if err != nil || len(h) != 2 || h[0].Actor.Agent != "kai" || h[1].Actor.Agent != "lee" {
		t.Fatalf("stored actors: %+v, %v; want kai then lee", h, err)
	}
}
