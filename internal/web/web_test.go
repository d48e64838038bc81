package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

// tokens the tests sign in with.
var principals = map[string]Principal{
	"admin-secret": {Name: "admin", Write: true},
	"read-secret":  {Name: "reader"},
	"kai-secret":   {Name: "kai", Write: true, Prefix: "kai/", Agent: "kai-bot"},
}

func authenticate(_ context.Context, token string) (Principal, error) {
	if p, ok := principals[token]; ok {
		return p, nil
	}
	return Principal{}, ErrBadToken
}

type fixture struct {
	t     *testing.T
	store *memstore.Store
	srv   *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st := memstore.New()
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: 50 * time.Millisecond}))
	t.Cleanup(func() {
		srv.Close()
		storetest.Verify(t, st)
	})
	return &fixture{t: t, store: st, srv: srv}
}

// client returns an HTTP client signed in with token ("" for none) that
// does not follow redirects.
func (f *fixture) client(token string) *http.Client {
	f.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if token != "" {
		res := f.post(c, "/login", "application/x-www-form-urlencoded", "token="+url.QueryEscape(token)+"&next=/", nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
			f.t.Fatalf("sign-in with %s: %s to %s", token, res.Status, res.Header.Get("Location"))
		}
	}
	return c
}

func (f *fixture) post(c *http.Client, path, ctype, body string, hdr map[string]string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Origin", f.srv.URL)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func (f *fixture) csrf(c *http.Client) string {
	u, _ := url.Parse(f.srv.URL)
	for _, k := range c.Jar.Cookies(u) {
		if k.Name == csrfCookie {
			return k.Value
		}
	}
	return ""
}

// act posts an action as the page does and returns the status and body.
func (f *fixture) act(c *http.Client, body map[string]any, hdr map[string]string) (int, map[string]any) {
	f.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/ui/api/action", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set(csrfHeader, f.csrf(c))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func (f *fixture) getJSON(c *http.Client, path string, out any) int {
	f.t.Helper()
	res, err := c.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			f.t.Fatalf("GET %s: %v", path, err)
		}
	}
	return res.StatusCode
}

func (f *fixture) create(id string, p ckpt.Patch) {
	f.t.Helper()
	if p.Status == nil {
		st := ckpt.StatusInProgress
		p.Status = &st
	}
	e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "test"}, ckpt.Created{Patch: p})
	if _, err := f.store.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func TestSignIn(t *testing.T) {
	f := newFixture(t)
	anon := f.client("")
	res, err := anon.Get(f.srv.URL + "/c/kai/a")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login?next=%2Fc%2Fkai%2Fa") {
		t.Errorf("a page without sign-in: %s to %q, want the sign-in page keeping the page asked for", res.Status, res.Header.Get("Location"))
	}
	if code := f.getJSON(anon, "/ui/api/overview", nil); code != http.StatusUnauthorized {
		t.Errorf("the API without sign-in: %d, want 401", code)
	}
	res = f.post(anon, "/login", "application/x-www-form-urlencoded", "token=wrong&next=/", nil)
	if loc := res.Header.Get("Location"); !strings.Contains(loc, "failed=1") {
		t.Errorf("a wrong token: redirected to %q, want the sign-in page saying it failed", loc)
	}
	res = f.post(anon, "/login", "application/x-www-form-urlencoded", "token=admin-secret&next=//evil.example/", nil)
	if loc := res.Header.Get("Location"); loc != "/" {
		t.Errorf("next pointing off the site: redirected to %q, want /", loc)
	}
	var tokenCookieSeen bool
	for _, k := range res.Cookies() {
		if k.Name == tokenCookie {
			tokenCookieSeen = true
			if !k.HttpOnly || k.SameSite != http.SameSiteStrictMode || k.Path != "/" {
				t.Errorf("token cookie %+v: want HttpOnly, SameSite=Strict, Path=/", k)
			}
		}
	}
	if !tokenCookieSeen {
		t.Fatal("sign-in set no token cookie")
	}
	res = f.post(anon, "/login", "application/x-www-form-urlencoded", "token=admin-secret", map[string]string{"Origin": "https://evil.example"})
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-site sign-in: %s, want 403", res.Status)
	}
	admin := f.client("admin-secret")
	var out overviewOut
	if code := f.getJSON(admin, "/ui/api/overview", &out); code != http.StatusOK || out.Me.Name != "admin" || !out.Me.Write {
		t.Errorf("signed in: %d, me %+v", code, out.Me)
	}
	// Sign-out needs the page's CSRF value and forgets the token.
	if res := f.post(admin, "/logout", "application/x-www-form-urlencoded", "", nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("sign-out without the CSRF value: %s, want 403", res.Status)
	}
	if res := f.post(admin, "/logout", "application/x-www-form-urlencoded", "csrf="+f.csrf(admin), nil); res.StatusCode != http.StatusSeeOther {
		t.Errorf("sign-out: %s", res.Status)
	}
	if code := f.getJSON(admin, "/ui/api/overview", nil); code != http.StatusUnauthorized {
		t.Errorf("after sign-out: %d, want 401", code)
	}
}

func TestActionsNeedWriteScopeAndTheirOwnPage(t *testing.T) {
	f := newFixture(t)
	f.create("kai/a", ckpt.Patch{})
	f.create("other/b", ckpt.Patch{})
	note := map[string]any{"action": "note", "id": "kai/a", "text": "hello"}

	reader := f.client("read-secret")
	if code, out := f.act(reader, note, nil); code != http.StatusForbidden || out["code"] != "forbidden" {
		t.Errorf("a read token acting: %d %v, want 403 forbidden", code, out)
	}
	admin := f.client("admin-secret")
	if code, _ := f.act(admin, note, map[string]string{csrfHeader: "forged"}); code != http.StatusForbidden {
		t.Errorf("an action without the CSRF value: %d, want 403", code)
	}
	if code, _ := f.act(admin, note, map[string]string{"Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Errorf("a cross-site action: %d, want 403", code)
	}
	if c, _ := f.store.Get(context.Background(), "kai/a", 0); c.Rev != 1 {
		t.Fatalf("refused actions wrote: revision %d", c.Rev)
	}
	kai := f.client("kai-secret")
	if code, _ := f.act(kai, map[string]any{"action": "note", "id": "other/b", "text": "x"}, nil); code != http.StatusForbidden {
		t.Errorf("a prefix token outside its prefix: %d, want 403", code)
	}
	if code, out := f.act(kai, note, nil); code != http.StatusOK || out["rev"] != float64(2) {
		t.Fatalf("a note: %d %v", code, out)
	}
	h, _ := f.store.History(context.Background(), "kai/a", 2, 0)
	if len(h) != 1 || h[0].Type != ckpt.EventNote || h[0].Actor.Agent != "kai-bot" {
		t.Errorf("the note event %+v: want a note by the token's agent", h)
	}
	var page struct {
		Me me `json:"me"`
	}
	f.getJSON(reader, "/ui/api/checkpoint?id=kai/a", &page)
	var detail checkpointOut
	f.getJSON(reader, "/ui/api/checkpoint?id=kai/a", &detail)
	if detail.CanAct || page.Me.Write {
		t.Errorf("a read token is offered actions: can_act %v, write %v", detail.CanAct, page.Me.Write)
	}
}

func TestDashboardActionsAreTheLibrarys(t *testing.T) {
	f := newFixture(t)
	st := ckpt.StatusBlocked
	f.create("kai/a", ckpt.Patch{Agent: &ckpt.Agent{ID: "old", Name: "old"}, Status: &st})
	admin := f.client("admin-secret")
	ctx := context.Background()
	e := ckpt.MustEvent(ckpt.EventBlocker, time.Now(), ckpt.Actor{Agent: "test"}, ckpt.BlockerChange{ID: "b1", Text: "waiting for review"})
	if _, err := f.store.Append(ctx, "kai/a", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	// The page explains the blocked state as `ckpt why` does.
	var detail checkpointOut
	f.getJSON(admin, "/ui/api/checkpoint?id=kai/a", &detail)
	if w := detail.Why; w.Presence.State != ckpt.PresenceBlocked || w.Rule.N != 6 || len(w.Presence.Blockers) != 1 ||
		w.Presence.Blockers[0] != "b1: waiting for review" || w.Rule.Change == "" || detail.Row.Presence != "blocked" {
		t.Errorf("the checkpoint page's why: %+v (row %q)", w, detail.Row.Presence)
	}
	if code, out := f.act(admin, map[string]any{"action": "unblock", "id": "kai/a", "blocker": "b1"}, nil); code != http.StatusOK {
		t.Fatalf("clear blocker: %d %v", code, out)
	}
	if c, _ := f.store.Get(ctx, "kai/a", 0); len(c.ActiveBlockers()) != 0 {
		t.Errorf("blockers after clearing: %+v", c.Blockers)
	}
	code, out := f.act(admin, map[string]any{"action": "takeover", "id": "kai/a", "agent": "new-agent"}, nil)
	if code != http.StatusOK || out["archived_as"] == "" {
		t.Fatalf("takeover: %d %v", code, out)
	}
	c, _ := f.store.Get(ctx, "kai/a", 0)
	archived, err := f.store.Get(ctx, out["archived_as"].(string), 0)
	if err != nil || c.Agent.Name != "new-agent" || archived.Agent.Name != "old" || archived.Archived == nil {
		t.Errorf("after takeover: agent %+v, archive %v %+v", c.Agent, err, archived)
	}
	if code, out := f.act(admin, map[string]any{"action": "restore", "id": "kai/a", "rev": 1}, nil); code != http.StatusOK {
		t.Errorf("restore: %d %v", code, out)
	}
	if code, out := f.act(admin, map[string]any{"action": "abandon", "id": "kai/a"}, nil); code != http.StatusOK {
		t.Errorf("abandon: %d %v", code, out)
	}
	if c, _ := f.store.Get(ctx, "kai/a", 0); c.Status != ckpt.StatusAbandoned {
		t.Errorf("status after abandon: %s", c.Status)
	}
	if code, out := f.act(admin, map[string]any{"action": "abandon", "id": "kai/a"}, nil); code != http.StatusBadRequest || out["code"] != "invalid" {
		t.Errorf("abandoning abandoned work: %d %v, want 400 invalid", code, out)
	}
	if code, out := f.act(admin, map[string]any{"action": "note", "id": "missing", "text": "x"}, nil); code != http.StatusNotFound || out["code"] != "not_found" {
		t.Errorf("a note on a missing checkpoint: %d %v", code, out)
	}
}

func TestOverviewPagesFiltersAndCounts(t *testing.T) {
	f := newFixture(t)
	for i := range 230 {
		p := ckpt.Patch{Title: ptr(fmt.Sprintf("task %d", i))}
		if i%10 == 0 {
			p.Status = ptr(ckpt.StatusDone)
		}
		if i%2 == 0 {
			p.Parent = ptr("plan-a")
		}
		f.create(fmt.Sprintf("fleet/%03d", i), p)
	}
	ctx := context.Background()
	if err := f.store.Beat(ctx, "fleet/001", ckpt.Signal{State: ckpt.PresenceWaiting, Reason: "permission"}); err != nil {
		t.Fatal(err)
	}
	admin := f.client("admin-secret")
	var seen []string
	after := ""
	for pages := 0; ; pages++ {
		var out overviewOut
		f.getJSON(admin, "/ui/api/overview?after="+url.QueryEscape(after), &out)
		if pages == 0 && (out.Counts["waiting"] != 1 || out.Counts["done"] != 23 || out.Counts["working"] != 206) {
			t.Errorf("counts %v, want 1 waiting, 23 done, 206 working", out.Counts)
		}
		if len(out.Rows) > defaultRows {
			t.Fatalf("a page of %d rows", len(out.Rows))
		}
		for _, r := range out.Rows {
			seen = append(seen, r.ID)
		}
		if out.Next == "" {
			break
		}
		after = out.Next
	}
	if len(seen) != 230 || seen[0] != "fleet/000" || seen[229] != "fleet/229" {
		t.Errorf("paged overview: %d rows (%v…)", len(seen), seen[:min(3, len(seen))])
	}
	var waiting overviewOut
	f.getJSON(admin, "/ui/api/overview?presence=waiting", &waiting)
	if len(waiting.Rows) != 1 || waiting.Rows[0].ID != "fleet/001" || waiting.Rows[0].Why != "permission" {
		t.Errorf("presence=waiting: %+v", waiting.Rows)
	}
	var text overviewOut
	f.getJSON(admin, "/ui/api/overview?q=TASK+22&parent=plan-a&status=in_progress", &text)
	var ids []string
	for _, r := range text.Rows {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, " ") != "fleet/022 fleet/222 fleet/224 fleet/226 fleet/228" {
		t.Errorf("text, parent and status filters: %v", ids)
	}
	var bad map[string]string
	if code := f.getJSON(admin, "/ui/api/overview?status=sleeping", &bad); code != http.StatusBadRequest || bad["code"] != "invalid" {
		t.Errorf("an unknown status: %d %v", code, bad)
	}
}

func ptr[T any](v T) *T { return &v }

// sseFrom reads n change events of a stream opened with ?from=cursor.
func (f *fixture) sseFrom(c *http.Client, cursor string, n int) []string {
	return f.sseAt(c, "/ui/api/events?from="+url.QueryEscape(cursor), "", n, nil)
}

// sse reads server-sent events until it has n change events.
func (f *fixture) sse(c *http.Client, lastID string, n int, during func()) []string {
	return f.sseAt(c, "/ui/api/events", lastID, n, during)
}

func (f *fixture) sseAt(c *http.Client, path, lastID string, n int, during func()) []string {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		f.t.Fatalf("events: %s %s", res.Status, ct)
	}
	sc := bufio.NewScanner(res.Body)
	var ids []string
	keepalive := false
	if during != nil {
		go during()
	}
	for len(ids) < n && sc.Scan() {
		line := sc.Text()
		if line == ": keepalive" {
			keepalive = true
		}
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) < n {
		f.t.Fatalf("events: %d of %d changes (%v)", len(ids), n, sc.Err())
	}
	_ = keepalive
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 0))
	return ids
}

func TestEventsResumeWithLastEventID(t *testing.T) {
	f := newFixture(t)
	admin := f.client("admin-secret")
	f.create("a", ckpt.Patch{})
	f.create("b", ckpt.Patch{})
	f.create("c", ckpt.Patch{})
	all := f.sse(admin, "0", 3, nil)
	rest := f.sse(admin, all[0], 2, nil)
	if rest[0] != all[1] || rest[1] != all[2] {
		t.Errorf("resumed after %s: %v, want %v", all[0], rest, all[1:])
	}
	// From the head: only what is written after the page connected. The
	// stream joins the feed just after its headers are out, and a write
	// before that is rightly not delivered: write until one is.
	delivered, writing := make(chan struct{}), make(chan struct{})
	made := 0
	got := f.sse(admin, "", 1, func() {
		defer close(writing)
		for made < 150 { // 30 s: only a broken stream gets this far
			made++
			f.create(fmt.Sprintf("d%d", made), ckpt.Patch{})
			select {
			case <-delivered:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
	close(delivered)
	<-writing
	if n, err := strconv.Atoi(got[0]); err != nil || n < 4 || n > 3+made {
		t.Errorf("a fresh stream delivered cursor %s, want one of the %d new changes (4 on)", got[0], made)
	}
	// A page's stream starts where its data was read: a write in between
	// is not missed.
	var out overviewOut
	f.getJSON(admin, "/ui/api/overview", &out)
	f.create("e", ckpt.Patch{})
	if got, want := f.sseFrom(admin, out.Cursor, 1), strconv.Itoa(4+made); got[0] != want {
		t.Errorf("a stream from the overview's cursor %s delivered %s, want the write made after it (%s)", out.Cursor, got[0], want)
	}
	if code := f.getJSON(f.client(""), "/ui/api/events", nil); code != http.StatusUnauthorized {
		t.Errorf("events without sign-in: %d", code)
	}
}

func TestPagesAndAssets(t *testing.T) {
	f := newFixture(t)
	admin := f.client("admin-secret")
	for path, want := range map[string]string{
		"/": "/assets/app.js", "/c/kai/a": "/assets/app.js", "/assets/app.js": "EventSource", "/assets/app.css": "prefers-color-scheme",
	} {
		res, err := admin.Get(f.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %s, want a body with %q", path, res.Status, want)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("GET %s: CSP %q", path, csp)
		}
	}
}
