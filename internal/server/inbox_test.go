package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// post sends body to path with bearer and returns the status and body.
func post(t *testing.T, f *fixture, bearer, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.http.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Content-Type", "application/json")
	return send(t, req)
}

func get(t *testing.T, f *fixture, bearer, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.http.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	return send(t, req)
}

func send(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(res.Body)
	return res.StatusCode, b.String()
}

// TestTellFollowsTheTokensGrant: who may tell whom is who may write: a read
// token cannot, a prefix token only under its prefix, and an agent-bound
// token is the sender whatever the body claims.
func TestTellFollowsTheTokensGrant(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	for _, id := range []string{"kai-7/a", "team/b"} {
		if _, err := f.store.Append(ctx, id, created(id), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	read := f.token(t, server.ScopeRead, "", "")
	if code, body := post(t, f, read, "/v1/tell/kai-7/a", `{"text":"hi"}`); code != http.StatusForbidden {
		t.Errorf("a read token told: %d %s", code, body)
	}
	lead := f.token(t, server.ScopeWrite, "kai-7/", "kai-lead")
	if code, body := post(t, f, lead, "/v1/tell/team/b", `{"text":"hi"}`); code != http.StatusForbidden {
		t.Errorf("a kai-7/ token told team/b: %d %s", code, body)
	}
	code, body := post(t, f, lead, "/v1/tell/kai-7/a", `{"text":"use the v2 schema","from":"the-boss"}`)
	if code != http.StatusCreated {
		t.Fatalf("tell: %d %s", code, body)
	}
	c, _ := f.store.Get(ctx, "kai-7/a", 0)
	if len(c.Messages) != 1 || c.Messages[0].From != "kai-lead" || c.Messages[0].Text != "use the v2 schema" {
		t.Fatalf("pending %+v, want one message from the token's agent kai-lead", c.Messages)
	}
	if code, body := post(t, f, lead, "/v1/tell/kai-7/a", `{"text":"`+strings.Repeat("x", ckpt.MaxMessageBytes+1)+`"}`); code != http.StatusBadRequest || !strings.Contains(body, "limit is 4096") {
		t.Errorf("an oversized message: %d %s", code, body)
	}
	// The generic append path binds the sender too.
	e := ckpt.MustEvent(ckpt.EventTold, time.Time{}, ckpt.Actor{Agent: "forged"}, ckpt.Tell{Text: "again"})
	if _, err := f.client(t, lead).Append(ctx, "kai-7/a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	c, _ = f.store.Get(ctx, "kai-7/a", 0)
	if len(c.Messages) != 2 || c.Messages[1].From != "kai-lead" {
		t.Fatalf("a told event over /v1/events recorded sender %+v", c.Messages)
	}
}

// TestInboxIsScopedToTheTokensPrefix: GET /v1/inbox lists what needs a
// person within the token's prefix, whatever prefix is asked for.
func TestInboxIsScopedToTheTokensPrefix(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	for _, id := range []string{"kai-7/a", "team/b"} {
		if _, err := f.store.Append(ctx, id, created(id), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		blk := ckpt.MustEvent(ckpt.EventBlocker, time.Time{}, ckpt.Actor{}, ckpt.BlockerChange{Text: "needs " + id})
		if _, err := f.store.Append(ctx, id, blk, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var in struct {
		Items []struct{ ID, State, Reason string }
	}
	code, body := get(t, f, f.admin, "/v1/inbox")
	if err := json.Unmarshal([]byte(body), &in); err != nil || code != 200 || len(in.Items) != 2 {
		t.Fatalf("admin inbox: %d %s", code, body)
	}
	kai := f.token(t, server.ScopeRead, "kai-7/", "")
	for _, q := range []string{"", "?prefix=team/", "?prefix=kai-"} {
		_, body = get(t, f, kai, "/v1/inbox"+q)
		in.Items = nil
		if err := json.Unmarshal([]byte(body), &in); err != nil || len(in.Items) != 1 || in.Items[0].ID != "kai-7/a" ||
			in.Items[0].State != "blocked" || in.Items[0].Reason != "b1: needs kai-7/a" {
			t.Errorf("kai-7/ token, inbox%s: %s", q, body)
		}
	}
}
