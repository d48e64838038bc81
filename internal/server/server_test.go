package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/remote"
)

type fixture struct {
	store  *memstore.Store
	tokens *server.FileTokens
	http   *httptest.Server
	admin  string
}

func newFixture(t *testing.T, opts server.Options) *fixture {
	t.Helper()
	tokens, err := server.OpenFileTokens(filepath.Join(t.TempDir(), server.TokenFileName))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := server.Bootstrap(context.Background(), tokens, time.Now())
	if err != nil || admin == "" {
		t.Fatalf("Bootstrap: %q, %v", admin, err)
	}
	st := memstore.New()
	opts.Tokens = tokens
	srv, err := server.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &fixture{store: st, tokens: tokens, http: hs, admin: admin}
}

// token makes a token with the given grant and returns its bearer string.
func (f *fixture) token(t *testing.T, scope server.Scope, prefix, agent string) string {
	t.Helper()
	tok, bearer, err := server.NewToken(scope, prefix, agent, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.tokens.Add(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	return bearer
}

func (f *fixture) client(t *testing.T, bearer string) *remote.Store {
	t.Helper()
	c, err := remote.New(f.http.URL, remote.Options{Token: bearer, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func created(title string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "claimed"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
}

func note(text string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "claimed"}, ckpt.Note{Text: text})
}

func TestBootstrapOnlyOnce(t *testing.T) {
	f := newFixture(t, server.Options{})
	again, err := server.Bootstrap(context.Background(), f.tokens, time.Now())
	if err != nil || again != "" {
		t.Errorf("a second Bootstrap made %q, %v; want nothing", again, err)
	}
}

func TestTokensAtRestAreHashes(t *testing.T) {
	f := newFixture(t, server.Options{})
	data, err := os.ReadFile(f.tokens.Path())
	if err != nil {
		t.Fatal(err)
	}
	secret := f.admin[strings.LastIndex(f.admin, "_")+1:]
	if bytes.Contains(data, []byte(secret)) {
		t.Errorf("the token file holds the secret itself")
	}
	fi, err := os.Stat(f.tokens.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	id := f.admin[len("ckpt_"):strings.LastIndex(f.admin, "_")]
	for name, bearer := range map[string]string{
		"none":         "",
		"garbage":      "hello",
		"wrong secret": "ckpt_" + id + "_" + strings.Repeat("0", 64),
		"unknown id":   "ckpt_000000000000_" + strings.Repeat("0", 64),
	} {
		_, err := f.client(t, bearer).Get(ctx, "x", 0)
		if !errors.Is(err, ckpt.ErrUnauthenticated) {
			t.Errorf("%s token: %v, want ErrUnauthenticated", name, err)
		}
	}
	if _, err := f.client(t, f.admin).Get(ctx, "x", 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("admin token: %v, want ErrNotFound (authenticated)", err)
	}
}

func TestScopes(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	admin := f.client(t, f.admin)
	if _, err := admin.Append(ctx, "team/a", created("a"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	read := f.client(t, f.token(t, server.ScopeRead, "", ""))
	if _, err := read.Get(ctx, "team/a", 0); err != nil {
		t.Errorf("a read token cannot read: %v", err)
	}
	if _, err := read.Append(ctx, "team/a", note("x"), ckpt.AppendOptions{}); !errors.Is(err, ckpt.ErrForbidden) {
		t.Errorf("a read token appended: %v", err)
	}
	if err := read.Beat(ctx, "team/a", ckpt.Signal{}); !errors.Is(err, ckpt.ErrForbidden) {
		t.Errorf("a read token beat: %v", err)
	}
	kai := f.client(t, f.token(t, server.ScopeWrite, "kai-7/", ""))
	if _, err := kai.Append(ctx, "kai-7/task", created("mine"), ckpt.AppendOptions{}); err != nil {
		t.Errorf("a prefix token cannot write under its prefix: %v", err)
	}
	for _, other := range []string{"team/a", "kai-70/task", "kai-7"} {
		if _, err := kai.Append(ctx, other, created("x"), ckpt.AppendOptions{}); !errors.Is(err, ckpt.ErrForbidden) {
			t.Errorf("a kai-7/ token wrote %s: %v", other, err)
		}
	}
	if _, _, err := ckpt.RestartCheckpoint(ctx, kai, "team/a", ckpt.Lifecycle{}); !errors.Is(err, ckpt.ErrForbidden) {
		t.Errorf("a kai-7/ token restarted team/a: %v", err)
	}
	if err := kai.Delete(ctx, "kai-7/task"); !errors.Is(err, ckpt.ErrForbidden) {
		t.Errorf("a write token deleted: %v", err)
	}
	if c, _ := f.store.Get(ctx, "team/a", 0); c.Rev != 1 {
		t.Errorf("team/a is at revision %d after refused writes", c.Rev)
	}
}

func TestAgentBoundTokenIsTheActor(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	bound := f.client(t, f.token(t, server.ScopeWrite, "", "kai-7"))
	res, err := bound.Append(ctx, "a", created("a"), ckpt.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Actor.Agent != "kai-7" {
		t.Errorf("actor %q recorded, want the token's agent kai-7", res.Event.Actor.Agent)
	}
	h, _ := f.store.History(ctx, "a", 0, 0)
	if h[0].Actor.Agent != "kai-7" {
		t.Errorf("stored actor %q", h[0].Actor.Agent)
	}
	c, err := ckpt.ResumeCheckpoint(ctx, bound, "a", ckpt.Lifecycle{Actor: ckpt.Actor{Agent: "someone-else"}}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	h, _ = f.store.History(ctx, "a", 2, 0)
	if c.Rev != 2 || h[0].Actor.Agent != "kai-7" {
		t.Errorf("resume recorded actor %+v", h[0].Actor)
	}
}

func TestRevokedTokenRefusedAtOnce(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	bearer := f.token(t, server.ScopeWrite, "", "")
	c := f.client(t, bearer)
	if _, err := c.Append(ctx, "a", created("a"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// Revoked in the file by another process (ckpt token revoke): a
	// second FileTokens on the same path.
	other, err := server.OpenFileTokens(f.tokens.Path())
	if err != nil {
		t.Fatal(err)
	}
	id := bearer[len("ckpt_"):strings.LastIndex(bearer, "_")]
	if err := other.Revoke(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, "a", note("after"), ckpt.AppendOptions{}); !errors.Is(err, ckpt.ErrUnauthenticated) {
		t.Errorf("a revoked token appended: %v", err)
	}
}

func TestHostAndOriginChecks(t *testing.T) {
	f := newFixture(t, server.Options{Hosts: []string{"127.0.0.1", "localhost"}, Origins: []string{"https://dash.example"}})
	do := func(host, origin string) int {
		req, _ := http.NewRequest("GET", f.http.URL+"/v1/info", nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Authorization", "Bearer "+f.admin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := do("evil.example:80", ""); s != http.StatusForbidden {
		t.Errorf("a rebinding Host got %d", s)
	}
	if s := do("localhost:1234", "https://evil.example"); s != http.StatusForbidden {
		t.Errorf("a foreign Origin got %d", s)
	}
	if s := do("localhost:1234", "https://dash.example"); s != http.StatusOK {
		t.Errorf("an allowed origin got %d", s)
	}
}

func TestBodyLimit(t *testing.T) {
	f := newFixture(t, server.Options{MaxBody: 1024})
	big := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: new(strings.Repeat("x", 4096))}})
	_, err := f.client(t, f.admin).Append(context.Background(), "big", big, ckpt.AppendOptions{})
	if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("an oversized body: %v", err)
	}
}

// TestOpenAPICoversTheRoutes: every path the document names is served
// (not the fallback).
func TestOpenAPICoversTheRoutes(t *testing.T) {
	f := newFixture(t, server.Options{})
	resp, err := http.Get(f.http.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc.OpenAPI == "" {
		t.Fatalf("openapi.json: %v", err)
	}
	for path, ops := range doc.Paths {
		concrete := strings.NewReplacer("{id}", "x", "{verb}", "resume").Replace(path)
		for method := range ops {
			req, _ := http.NewRequest(strings.ToUpper(method), f.http.URL+concrete, strings.NewReader("{}"))
			req.Header.Set("Authorization", "Bearer "+f.admin)
			// Every endpoint answers at once; the bound only ends a broken test.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				cancel()
				t.Fatalf("%s %s: %v", method, path, err)
			}
			var body []byte
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				body, _ = io.ReadAll(io.LimitReader(resp.Body, 4096))
			}
			resp.Body.Close()
			cancel()
			if bytes.Contains(body, []byte("no endpoint")) || resp.StatusCode == http.StatusMethodNotAllowed {
				t.Errorf("%s %s is documented but not served: %d %s", method, path, resp.StatusCode, body)
			}
		}
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	c := f.client(t, f.admin)
	e := created("m")
	e.Key = "k1"
	for range 2 { // the second replays
		if _, err := c.Append(ctx, "m", e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Append(ctx, "m", note("x"), ckpt.AppendOptions{IfRev: 9}); !errors.Is(err, ckpt.ErrConflict) {
		t.Fatal(err)
	}
	if err := c.Beat(ctx, "m", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	f.client(t, "ckpt_x_y").Get(ctx, "m", 0)
	scrape := func(bearer string) (int, string) {
		req, _ := http.NewRequest("GET", f.http.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := scrape(f.token(t, server.ScopeRead, "", "")); code != http.StatusForbidden {
		t.Errorf("a read token scraped metrics: %d", code)
	}
	code, body := scrape(f.admin)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`ckpt_appends_total{result="appended"} 1`,
		`ckpt_appends_total{result="replayed"} 1`,
		`ckpt_appends_total{result="conflict"} 1`,
		`ckpt_beats_total 1`,
		`ckpt_checkpoints{liveness="live"} 1`,
		`ckpt_auth_failures_total{reason="invalid"} 1`,
		`ckpt_auth_failures_total{reason="forbidden"} 1`,
		`ckpt_stream_subscribers 0`,
		`ckpt_request_duration_seconds_count{code="2xx",route="/v1/events/{id...}"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestChangeFeedStream: the raw stream an EventSource meets: keepalive
// comments while idle, then each change with its cursor as the event id;
// a reconnect with Last-Event-ID resumes after it.
func TestChangeFeedStream(t *testing.T) {
	f := newFixture(t, server.Options{Keepalive: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(lastID string) *bufio.Reader {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.http.URL+"/v1/changes?from=now", nil)
		req.Header.Set("Authorization", "Bearer "+f.admin)
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("GET /v1/changes: %v %v", resp, err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return bufio.NewReader(resp.Body)
	}
	until := func(rd *bufio.Reader, prefix string) string {
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended before %q: %v", prefix, err)
			}
			if strings.HasPrefix(line, prefix) {
				return strings.TrimSpace(strings.TrimPrefix(line, prefix))
			}
		}
	}
	rd := open("")
	until(rd, ": keepalive")
	c := f.client(t, f.admin)
	for _, id := range []string{"s/1", "s/2"} {
		if _, err := c.Append(ctx, id, created(id), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first := until(rd, "id: ")
	if data := until(rd, "data: "); !strings.Contains(data, `"id":"s/1"`) {
		t.Errorf("first change %s", data)
	}
	resumed := open(first)
	until(resumed, "id: ")
	if data := until(resumed, "data: "); !strings.Contains(data, `"id":"s/2"`) {
		t.Errorf("resuming after %s gave %s, want s/2", first, data)
	}
}

// countingTokens counts lookups.
type countingTokens struct {
	server.TokenStore
	lookups int
}

func (c *countingTokens) Lookup(ctx context.Context, id string) (server.Token, error) {
	c.lookups++
	return c.TokenStore.Lookup(ctx, id)
}

// TestEveryBearerCostsOneLookup: a right token, a wrong secret, an unknown
// ID and garbage each cost one lookup by ID and one hash comparison: no
// early return tells a caller which part was wrong.
func TestEveryBearerCostsOneLookup(t *testing.T) {
	f := newFixture(t, server.Options{})
	ct := &countingTokens{TokenStore: f.tokens}
	id := f.admin[len("ckpt_"):strings.LastIndex(f.admin, "_")]
	for _, b := range []string{f.admin, "ckpt_" + id + "_" + strings.Repeat("1", 64), "ckpt_ffffffffffff_" + strings.Repeat("1", 64), "garbage", ""} {
		ct.lookups = 0
		_, err := server.Authenticate(context.Background(), ct, b, time.Now())
		if ct.lookups != 1 {
			t.Errorf("bearer %.20q: %d lookups", b, ct.lookups)
		}
		if (b == f.admin) != (err == nil) {
			t.Errorf("bearer %.20q: %v", b, err)
		}
	}
}
