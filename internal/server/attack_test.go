package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
)

// post sends body to path as bearer and returns the status and body.
func (f *fixture) post(t *testing.T, bearer, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// A body with more after its JSON value, a body in invalid UTF-8 and an
// event dated year 1 are refused with a 400 that says what to send, and
// nothing is stored.
func TestMalformedAppendsAreRefused(t *testing.T) {
	f := newFixture(t, server.Options{})
	ev := `{"type":"created","at":"2026-01-15T14:30:00Z","actor":{"agent":"a"},"data":{"title":"T"}}`
	for name, c := range map[string]struct{ body, says string }{
		"trailing JSON":  {ev + `{"type":"note","data":{"text":"smuggled"}}`, "data after its JSON value"},
		"trailing junk":  {ev + ` x`, "data after its JSON value"},
		"invalid UTF-8":  {strings.Replace(ev, `"T"`, "\"T\xff\xfe\"", 1), "not valid UTF-8"},
		"year-1 time":    {strings.Replace(ev, "2026-01-15", "0001-01-02", 1), "not plausible"},
		"year-1999 time": {strings.Replace(ev, "2026-01-15", "1999-12-31", 1), "not plausible"},
	} {
		status, body := f.post(t, f.admin, "/v1/events/kai/a", c.body)
		if status != http.StatusBadRequest || !strings.Contains(body, c.says) || !strings.Contains(body, `"invalid"`) {
			t.Errorf("%s: %d %s, want 400 invalid saying %q", name, status, body, c.says)
		}
	}
	if _, err := f.store.Get(context.Background(), "kai/a", 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("a refused append stored something: %v", err)
	}
	if status, body := f.post(t, f.admin, "/v1/events/kai/a", ev+"\n  "); status != http.StatusCreated {
		t.Errorf("one event with trailing white space: %d %s", status, body)
	}
}

// failingStore is a store whose database is away, with a driver's error
// that names its user, database and socket.
type failingStore struct{ *memstore.Store }

var errDBDown = fmt.Errorf("%w: failed to connect to `user=ckpt_owner database=tenant_secrets`: /var/run/postgresql/.s.PGSQL.5432: connection refused", ckpt.ErrUnavailable)

func (failingStore) List(context.Context, ckpt.ListOptions) (ckpt.Page, error) {
	return ckpt.Page{}, errDBDown
}

// A 503 tells the client to try again and nothing about the database.
func TestUnavailableRevealsNothingOfTheDatabase(t *testing.T) {
	tokens, err := server.OpenFileTokens(filepath.Join(t.TempDir(), server.TokenFileName))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := server.Bootstrap(context.Background(), tokens, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(failingStore{memstore.New()}, server.Options{Tokens: tokens, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/readyz", "/v1/checkpoints"} {
		req, _ := http.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Authorization", "Bearer "+admin)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		body := rec.Body.String()
		if rec.Code != http.StatusServiceUnavailable || strings.Contains(body, "ckpt_owner") || strings.Contains(body, "tenant_secrets") ||
			strings.Contains(body, "postgresql") || !strings.Contains(body, "try again") {
			t.Errorf("GET %s: %d %s", path, rec.Code, body)
		}
	}
}

// Snapshots written by a token bound to kai-7 keep the checkpoint's
// agent: an import, a restore or a sync cannot name another agent.
func TestBoundSnapshotsKeepTheCheckpointsAgent(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	kai := f.client(t, f.token(t, server.ScopeWrite, "kai-7", "kai-7"))
	snap := func(typ ckpt.EventType, agent string) ckpt.Event {
		return ckpt.MustEvent(typ, time.Now(), ckpt.Actor{Agent: agent}, ckpt.Snapshot{State: ckpt.Checkpoint{
			Title: "T", Status: ckpt.StatusInProgress, Agent: ckpt.Agent{ID: agent, Name: agent, Type: "codex"}}})
	}
	if _, err := kai.Append(ctx, "kai-7/a", snap(ckpt.EventImported, "mallory"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := f.store.Get(ctx, "kai-7/a", 0)
	if err != nil || c.Agent.ID != "kai-7" || c.Agent.Type != "codex" {
		t.Fatalf("an import by a kai-7 token naming mallory made agent %+v (%v), want kai-7 (codex)", c.Agent, err)
	}
	for _, typ := range []ckpt.EventType{ckpt.EventRestored, ckpt.EventSynced, ckpt.EventImported} {
		if _, err := kai.Append(ctx, "kai-7/a", snap(typ, "mallory"), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		if c, err := f.store.Get(ctx, "kai-7/a", 0); err != nil || c.Agent.ID != "kai-7" {
			t.Errorf("a %s snapshot by a kai-7 token naming mallory left agent %+v (%v)", typ, c.Agent, err)
		}
	}
}

// A prefix is a path prefix: --prefix team-a writes team-a/… only.
func TestPrefixIsAPathPrefix(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	team := f.client(t, f.token(t, server.ScopeWrite, "team-a", ""))
	if _, err := team.Append(ctx, "team-a/x", created("t"), ckpt.AppendOptions{}); err != nil {
		t.Errorf("team-a/x: %v", err)
	}
	for _, id := range []string{"team-ab/x", "team-a-evil/x", "team-a"} {
		if _, err := team.Append(ctx, id, created("t"), ckpt.AppendOptions{}); !errors.Is(err, ckpt.ErrForbidden) {
			t.Errorf("a team-a token wrote %s: %v", id, err)
		}
	}
}
