package remote_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// TestSpoolKeepsAsCheckpointAgent: a write spooled while the server is
// away keeps AppendOptions.AsCheckpointAgent, so that when it is delivered
// it is recorded as the checkpoint's agent's, as it would have been at once.
func TestSpoolKeepsAsCheckpointAgent(t *testing.T) {
	ctx := context.Background()
	tokens, admin := fleetTokens(t)
	backend := memstore.New()
	srv := run(t, backend, tokens, "127.0.0.1:0")
	sp := remote.NewSpool(dial(t, srv.url(), admin, 2), filepath.Join(t.TempDir(), "spool"), true, nil)
	person := ckpt.Actor{Agent: "user:ana"}
	if _, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, person, ckpt.Created{Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "kai"}}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.stop(t)
	var spooled *remote.SpooledError
	for _, opts := range []ckpt.AppendOptions{{AsCheckpointAgent: true}, {}} {
		_, err := sp.Append(ctx, "a", ckpt.MustEvent(ckpt.EventNote, time.Time{}, person, ckpt.Note{Text: "n"}), opts)
		if !errors.As(err, &spooled) {
			t.Fatalf("append with the server away: %v, want a SpooledError", err)
		}
	}
	run(t, backend, tokens, srv.addr)
	if err := sp.Deliver(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := backend.History(ctx, "a", 2, 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("delivered history: %d events, %v; want 2", len(h), err)
	}
	if h[0].Actor.Agent != "kai" || h[1].Actor.Agent != "user:ana" {
		t.Errorf("delivered actors %q, %q; want kai (AsCheckpointAgent), then user:ana", h[0].Actor.Agent, h[1].Actor.Agent)
	}
}
