package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/internal/tracker/internal/apicall/apicalltest"
)

const token = "ghp_test-token"

// fakeGitHub is a local stand-in for the issue-comments API that checks
// every request it gets the way GitHub would, and records it.
type fakeGitHub struct {
	t      *testing.T
	prefix string // "" for github.com, "/api/v3" for Enterprise Server

	mu       sync.Mutex
	log      []string         // "METHOD path" of every request
	comments map[int64]string // id → body
	nextID   int64
	status   int  // when set, every request gets this status
	lenient  bool // unknown paths get GitHub's 404 without failing the test
}

func newFake(t *testing.T, prefix string) (*fakeGitHub, *httptest.Server) {
	f := &fakeGitHub{t: t, prefix: prefix, comments: map[int64]string{}, nextID: 1000}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	for h, want := range map[string]string{
		"Accept":               "application/vnd.github+json",
		"Authorization":        "Bearer " + token,
		"X-GitHub-Api-Version": "2022-11-28",
		"Content-Type":         "application/json",
		"User-Agent":           "ckpt",
	} {
		if got := r.Header.Get(h); got != want {
			f.t.Errorf("%s %s: header %s = %q, want %q", r.Method, r.URL.Path, h, got, want)
		}
	}
	raw, _ := io.ReadAll(r.Body)
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil || len(in) != 1 {
		f.t.Errorf("%s %s: body %s: want exactly {\"body\": …}", r.Method, r.URL.Path, raw)
	}
	body, ok := in["body"].(string)
	if !ok {
		f.t.Errorf("%s %s: body field is %T", r.Method, r.URL.Path, in["body"])
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"message":%q,"documentation_url":"https://docs.github.com/rest"}`, http.StatusText(f.status))
		return
	}
	path := strings.TrimPrefix(r.URL.Path, f.prefix)
	switch {
	case r.Method == http.MethodPost && path == "/repos/octo/hello/issues/42/comments":
		f.nextID++
		f.comments[f.nextID] = body
		w.WriteHeader(http.StatusCreated)
		f.writeComment(w, f.nextID)
	case r.Method == http.MethodPatch && strings.HasPrefix(path, "/repos/octo/hello/issues/comments/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(path, "/repos/octo/hello/issues/comments/"), 10, 64)
		if _, ok := f.comments[id]; !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest/issues/comments#update-an-issue-comment","status":"404"}`)
			return
		}
		f.comments[id] = body
		f.writeComment(w, id)
	default:
		if !f.lenient {
			f.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message":"Not Found"}`)
	}
}

func (f *fakeGitHub) writeComment(w http.ResponseWriter, id int64) {
	fmt.Fprintf(w, `{"id":%d,"node_id":"IC_x","url":"https://api.github.com/repos/octo/hello/issues/comments/%d","html_url":"https://github.com/octo/hello/issues/42#issuecomment-%d","body":%q,"user":{"login":"bot"}}`,
		id, id, id, f.comments[id])
}

func (f *fakeGitHub) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.log
	f.log = nil
	return out
}

func newTracker(t *testing.T, base string, timeout time.Duration) *Tracker {
	t.Helper()
	tr, err := New(Config{Repo: "octo/hello", Token: token, BaseURL: base, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestUpsertCreatesThenUpdatesInPlace(t *testing.T) {
	f, srv := newFake(t, "")
	tr := newTracker(t, srv.URL, 0)
	ctx := context.Background()

	c, err := tr.Upsert(ctx, "42", "", "## Checkpoint Status\n\nfirst")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "1001" || c.URL != "https://github.com/octo/hello/issues/42#issuecomment-1001" {
		t.Fatalf("created %+v", c)
	}
	if got := fmt.Sprint(f.requests()); got != "[POST /repos/octo/hello/issues/42/comments]" {
		t.Fatalf("requests %s", got)
	}

	c2, err := tr.Upsert(ctx, "#42", c.ID, "## Checkpoint Status\n\nsecond")
	if err != nil {
		t.Fatal(err)
	}
	if c2.ID != c.ID {
		t.Fatalf("update returned ID %s, want %s", c2.ID, c.ID)
	}
	if got := fmt.Sprint(f.requests()); got != "[PATCH /repos/octo/hello/issues/comments/1001]" {
		t.Fatalf("requests %s", got)
	}
	if len(f.comments) != 1 || f.comments[1001] != "## Checkpoint Status\n\nsecond" {
		t.Fatalf("comments on the issue: %v; want one, updated", f.comments)
	}
}

func TestUpsertRecreatesADeletedComment(t *testing.T) {
	f, srv := newFake(t, "")
	tr := newTracker(t, srv.URL, 0)
	c, err := tr.Upsert(context.Background(), "42", "77", "status")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "1001" {
		t.Fatalf("got %+v, want a new comment", c)
	}
	if got := fmt.Sprint(f.requests()); got != "[PATCH /repos/octo/hello/issues/comments/77 POST /repos/octo/hello/issues/42/comments]" {
		t.Fatalf("requests %s", got)
	}
	// An ID that cannot be GitHub's (a Linear UUID) goes straight to create.
	if _, err := tr.Upsert(context.Background(), "42", "0d7c9a4e-3b1f-4c2a-9e8d-1a2b3c4d5e6f", "status"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.requests()); got != "[POST /repos/octo/hello/issues/42/comments]" {
		t.Fatalf("requests %s", got)
	}
}

func TestUpsertEnterpriseBaseURL(t *testing.T) {
	f, srv := newFake(t, "/api/v3")
	tr := newTracker(t, srv.URL+"/api/v3/", 0)
	if _, err := tr.Upsert(context.Background(), "42", "", "status"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.requests()); got != "[POST /api/v3/repos/octo/hello/issues/42/comments]" {
		t.Fatalf("requests %s", got)
	}
}

func TestUpsertServerErrorSaysWhatHappened(t *testing.T) {
	f, srv := newFake(t, "")
	f.status = http.StatusServiceUnavailable
	tr := newTracker(t, srv.URL, 0)
	_, err := tr.Upsert(context.Background(), "42", "1001", "status")
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindHTTP || e.Status != 503 || e.Op != "update comment" {
		t.Fatalf("err = %#v", err)
	}
	if err.Error() != "GitHub update comment: HTTP 503: Service Unavailable" {
		t.Fatalf("Error() = %q", err)
	}
	if errors.Is(err, tracker.ErrUnreachable) {
		t.Fatal("a 503 answer is not unreachable")
	}
	if line := tracker.FailureLine("GitHub", err); line != "Failed: GitHub update (HTTP 503) — status not persisted to issue tracker." {
		t.Fatalf("FailureLine = %q", line)
	}
	if got := fmt.Sprint(f.requests()); got != "[PATCH /repos/octo/hello/issues/comments/1001]" {
		t.Fatalf("a 5xx must not fall through to create: requests %s", got)
	}

	f.status = http.StatusUnauthorized
	_, err = tr.Upsert(context.Background(), "42", "", "status")
	if err == nil || err.Error() != "GitHub create comment: HTTP 401: Unauthorized (the token was refused: check GITHUB_TOKEN or GH_TOKEN)" {
		t.Fatalf("401: %v", err)
	}
}

func TestUpsertMissingIssueHint(t *testing.T) {
	f, srv := newFake(t, "")
	f.lenient = true
	tr, err := New(Config{Repo: "octo/other", Token: token, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Upsert(context.Background(), "7", "", "status")
	if err == nil || !strings.Contains(err.Error(), "HTTP 404: Not Found (no issue #7 in octo/other, or the token cannot see that repository)") {
		t.Fatalf("err = %v", err)
	}
	if got := fmt.Sprint(f.requests()); got != "[POST /repos/octo/other/issues/7/comments]" {
		t.Fatalf("requests %s", got)
	}
}

func TestUpsertTimeout(t *testing.T) {
	tr := newTracker(t, apicalltest.StalledServer(t), 100*time.Millisecond)
	_, err := tr.Upsert(context.Background(), "42", "", "status")
	apicalltest.RequireTimeout(t, err)
	if got := tracker.Reason(err); got != "timed out after 100ms" {
		t.Fatalf("Reason = %q", got)
	}
}

func TestUpsertUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	tr := newTracker(t, url, 0)
	_, err := tr.Upsert(context.Background(), "42", "", "status")
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindUnreachable || !errors.Is(err, tracker.ErrUnreachable) {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "GitHub create comment: unreachable: ") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Error() = %q", err)
	}
}

func TestConfigAndIssueValidation(t *testing.T) {
	for _, cfg := range []Config{
		{Repo: "octo", Token: token},
		{Repo: "octo/hello/x", Token: token},
		{Repo: "../hello", Token: token},
		{Repo: "octo/hello", Token: " "},
		{Repo: "octo/hello", Token: token, BaseURL: "ftp://example.com"},
		{Repo: "octo/hello", Token: token, BaseURL: "api.github.com"},
	} {
		if _, err := New(cfg); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("New(%+v) err = %v, want ErrInvalid", cfg, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("no request may be sent for a bad issue; got %s %s", r.Method, r.URL)
	}))
	t.Cleanup(srv.Close)
	tr := newTracker(t, srv.URL, 0)
	for _, issue := range []string{"", "abc", "0", "-1", "42/../1", "CIA-1"} {
		if _, err := tr.Upsert(context.Background(), issue, "", "b"); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("issue %q: err = %v, want ErrInvalid", issue, err)
		}
	}
}

func TestParseError(t *testing.T) {
	for body, want := range map[string]string{
		`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"missing_field","field":"body"}]}`: "Validation Failed; IssueComment body missing_field",
		`{"message":"Bad credentials","documentation_url":"x"}`:                                                        "Bad credentials",
		`{"message":"x","errors":["plain text",{"message":"body is too long (maximum is 65536 characters)"}]}`:         "x; plain text; body is too long (maximum is 65536 characters)",
		`<html>bad gateway</html>`: "",
	} {
		if got := parseError([]byte(body)); got != want {
			t.Errorf("parseError(%s) = %q, want %q", body, got, want)
		}
	}
}

func FuzzParseComment(f *testing.F) {
	f.Add([]byte(`{"id":1001,"html_url":"https://github.com/o/r/issues/1#issuecomment-1001"}`))
	f.Add([]byte(`{"id":"12"}`))
	f.Add([]byte(`{"id":1.5}`))
	f.Add([]byte(`{"id":-3}`))
	f.Add([]byte(`{"id":99999999999999999999}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := parseComment(body)
		if err != nil {
			return
		}
		id, perr := strconv.ParseInt(c.ID, 10, 64)
		if perr != nil || id <= 0 || strconv.FormatInt(id, 10) != c.ID {
			t.Fatalf("accepted comment ID %q from %q", c.ID, body)
		}
	})
}

func FuzzParseError(f *testing.F) {
	f.Add([]byte(`{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"missing_field","field":"body"}]}`))
	f.Add([]byte(`{"message":"Not Found"}`))
	f.Add([]byte(`{"errors":[1,null,"x",{}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if msg := parseError(body); strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("message has a line break: %q", msg)
		}
	})
}
