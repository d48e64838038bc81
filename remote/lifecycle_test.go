package remote_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// requestLog records the method and path of every request a server gets.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.reqs
	l.reqs = nil
	return r
}

// Every lifecycle function of the root package, given a server store (even
// behind the spool), runs on the server in one call: no read or append
// crosses the network, and the answer (a refusal included) is the one the
// function gives over a local store.
func TestLifecycleRunsOnTheServer(t *testing.T) {
	tokens, err := server.OpenFileTokens(filepath.Join(t.TempDir(), server.TokenFileName))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := server.Bootstrap(context.Background(), tokens, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	backend := memstore.New()
	srv, err := server.New(backend, server.Options{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	var log requestLog
	hs := httptest.NewServer(log.wrap(srv))
	t.Cleanup(hs.Close)
	client, err := remote.New(hs.URL, remote.Options{Token: admin})
	if err != nil {
		t.Fatal(err)
	}
	st := remote.NewSpool(client, filepath.Join(t.TempDir(), "spool"), true, nil)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	title := "work"
	if _, err := backend.Append(ctx, "w", ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "A"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	l := ckpt.Lifecycle{At: at.Add(time.Minute), Actor: ckpt.Actor{Agent: "B"}}

	oneCall := func(verb string) {
		t.Helper()
		got := log.take()
		if len(got) != 1 || got[0] != "POST /v1/lifecycle/"+verb+"/w" {
			t.Errorf("%s made the requests %q, want one POST /v1/lifecycle/%s/w", verb, got, verb)
		}
	}
	c, archive, err := ckpt.TakeOverCheckpoint(ctx, st, "w", ckpt.Agent{ID: "B"}, l)
	if err != nil || c.Agent.ID != "B" || !strings.HasPrefix(archive, "w_crashed_") {
		t.Fatalf("takeover: %v, agent %+v, archive %q", err, c, archive)
	}
	oneCall("takeover")
	if c, err = ckpt.ResumeCheckpoint(ctx, st, "w", l, nil, false); err != nil || c.Session.Number != 3 {
		t.Fatalf("resume: %v, %+v", err, c)
	}
	oneCall("resume")
	if _, _, err = ckpt.RestartCheckpoint(ctx, st, "w", l); err != nil {
		t.Fatal(err)
	}
	oneCall("restart")
	if c, err = ckpt.RestoreCheckpoint(ctx, st, "w", 1, l); err != nil || c.Rev != 5 {
		t.Fatalf("restore: %v, %+v", err, c)
	}
	oneCall("restore")

	// A refusal arrives as the library's own error, with its rule.
	_, _, err = ckpt.ArchiveCheckpoint(ctx, st, "w", "superseded", l)
	var refused *ckpt.RefusedError
	if !errors.As(err, &refused) || refused.Rule != ckpt.RuleLive || !refused.Forcible || !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("archive of live work: %v, want a forcible RefusedError (rule live)", err)
	}
	oneCall("archive")
	l.Force = true
	r, already, err := ckpt.ArchiveCheckpoint(ctx, st, "w", "superseded", l)
	if err != nil || already || r.State.Archived == nil || r.Event.Type != ckpt.EventArchived {
		t.Fatalf("forced archive: %v, already %v, %+v", err, already, r)
	}
	oneCall("archive")
	if _, already, err = ckpt.ArchiveCheckpoint(ctx, st, "w", "again", l); err != nil || !already {
		t.Fatalf("archive again: %v, already %v", err, already)
	}
	oneCall("archive")

	if _, err := backend.Append(ctx, "quiet", ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "A"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	c, abandoned, err := ckpt.AbandonCheckpoint(ctx, st, "quiet", at.Add(time.Hour), "no sign of life", l)
	if err != nil || !abandoned || c.Status != ckpt.StatusAbandoned {
		t.Fatalf("abandon: %v, %v, %+v", err, abandoned, c)
	}
	if got := log.take(); len(got) != 1 || got[0] != "POST /v1/lifecycle/abandon/quiet" {
		t.Errorf("abandon made the requests %q", got)
	}
	h, err := backend.History(ctx, "w", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if h[1].Type != ckpt.EventTakenOver || h[1].Actor.Agent != "B" {
		t.Errorf("the takeover the server recorded: %+v", h[1])
	}
}
