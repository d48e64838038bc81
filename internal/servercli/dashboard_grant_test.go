package servercli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
)

// dashboardFixture is ckpt serve's handler as serverOptions wires it (the
// API, the dashboard, their shared feed and token watch) over a memstore,
// with one kai-7 token signed in to the dashboard.
type dashboardFixture struct {
	st      *memstore.Store
	tokens  *server.FileTokens
	hs      *httptest.Server
	page    *http.Client
	csrf    string
	tokenID string
}

func newDashboardFixture(t *testing.T) *dashboardFixture {
	t.Helper()
	ctx := context.Background()
	st := memstore.New()
	path := filepath.Join(t.TempDir(), server.TokenFileName)
	o := &ServeOptions{IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}, Now: time.Now}
	opts, closeTokens, err := o.serverOptions(ctx, st, path, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeTokens)
	srv, err := server.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	tokens := opts.Tokens.(*server.FileTokens)
	tok, bearer, err := server.NewToken(server.ScopeWrite, "kai-7", "kai-7", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := tokens.Add(ctx, tok); err != nil {
		t.Fatal(err)
	}
	e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "owner"}, ckpt.Created{Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: "owner", Name: "owner"}}})
	if _, err := st.Append(ctx, "kai-7/a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	page := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/login", strings.NewReader("next=/&token="+url.QueryEscape(bearer)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", hs.URL)
	res, err := page.Do(req)
	if err != nil || res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("sign-in: %v %v", res, err)
	}
	res.Body.Close()
	u, _ := url.Parse(hs.URL)
	f := &dashboardFixture{st: st, tokens: tokens, hs: hs, page: page, tokenID: tok.ID}
	for _, c := range jar.Cookies(u) {
		if c.Name == "ckpt_csrf" {
			f.csrf = c.Value
		}
	}
	return f
}

// A dashboard signed in with a token bound to agent kai-7 that takes a
// checkpoint over naming another agent records kai-7, as the API and MCP
// do: the dashboard writes through the token's grant.
func TestDashboardTakeoverNamesTheTokensAgent(t *testing.T) {
	f := newDashboardFixture(t)
	req, _ := http.NewRequest(http.MethodPost, f.hs.URL+"/ui/api/action", strings.NewReader(`{"action":"takeover","id":"kai-7/a","agent":"mallory"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.hs.URL)
	req.Header.Set("X-Ckpt-Csrf", f.csrf)
	res, err := f.page.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("takeover: %s %s", res.Status, body)
	}
	c, err := f.st.Get(context.Background(), "kai-7/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent.ID != "kai-7" {
		t.Errorf("after a takeover by a kai-7 token naming mallory, the agent is %+v, want kai-7", c.Agent)
	}
}

// The dashboard's event stream ends when its token is revoked (here in
// the token file, as ckpt token revoke or another replica does).
func TestDashboardStreamEndsWhenTheTokenIsRevoked(t *testing.T) {
	f := newDashboardFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.hs.URL+"/ui/api/events", nil)
	res, err := f.page.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("events: %s", res.Status)
	}
	if err := f.tokens.Revoke(ctx, f.tokenID); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(res.Body)
	sawError := false
	for sc.Scan() {
		sawError = sawError || strings.HasPrefix(sc.Text(), "event: feed-error")
	}
	if ctx.Err() != nil || !sawError {
		t.Errorf("the stream of a revoked token: ended %v, said why %v (%v)", ctx.Err() == nil, sawError, sc.Err())
	}
}
