package linear

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/internal/tracker/internal/apicall/apicalltest"
)

const (
	apiKey    = "lin_api_testkey"
	issueUUID = "5f0b2a8e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"
)

// fakeLinear is a local stand-in for Linear's GraphQL endpoint. It accepts
// exactly the three documents the tracker sends, checks headers and
// variables, and records one line per request.
type fakeLinear struct {
	t *testing.T

	mu           sync.Mutex
	auth         string // the expected Authorization header
	log          []string
	comments     map[string]string // id → body
	next         int
	status       int // when set, every request gets this status and a GraphQL error
	notFoundCode int // the HTTP status of an "Entity not found" answer
}

func newFake(t *testing.T) (*fakeLinear, *httptest.Server) {
	f := &fakeLinear{t: t, auth: apiKey, comments: map[string]string{}, notFoundCode: http.StatusOK}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeLinear) commentID(n int) string { return fmt.Sprintf("c0ffee00-0000-4000-8000-%012d", n) }

func (f *fakeLinear) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/graphql" {
		f.t.Errorf("request %s %s, want POST /graphql", r.Method, r.URL.Path)
	}
	for h, want := range map[string]string{"Authorization": f.auth, "Content-Type": "application/json", "Accept": "application/json"} {
		if got := r.Header.Get(h); got != want {
			f.t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	raw, _ := io.ReadAll(r.Body)
	var req struct {
		Query     string                     `json:"query"`
		Variables map[string]json.RawMessage `json:"variables"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		f.t.Errorf("body %s: %v", raw, err)
	}
	w.Header().Set("Content-Type", "application/json")
	if f.status != 0 {
		f.log = append(f.log, "HTTP "+fmt.Sprint(f.status))
		w.WriteHeader(f.status)
		fmt.Fprintf(w, `{"errors":[{"message":%q,"extensions":{"type":"authentication_error","userPresentableMessage":"Your API key is not valid."}}]}`, http.StatusText(f.status))
		return
	}
	switch req.Query {
	case issueQuery:
		var id string
		f.vars(req.Variables, map[string]any{"id": &id})
		f.log = append(f.log, "issue "+id)
		if id != "CIA-123" {
			io.WriteString(w, `{"data":{"issue":null},"errors":[{"message":"Entity not found: Issue","path":["issue"],"extensions":{"type":"invalid input","code":"INPUT_ERROR","userPresentableMessage":"Could not find referenced Issue."}}]}`)
			return
		}
		fmt.Fprintf(w, `{"data":{"issue":{"id":%q,"identifier":"CIA-123"}}}`, issueUUID)
	case createMutation:
		var input struct{ IssueID, Body string }
		f.vars(req.Variables, map[string]any{"input": &input})
		f.log = append(f.log, "commentCreate")
		if input.IssueID != issueUUID || input.Body == "" {
			f.t.Errorf("commentCreate input %+v: want issueId %s and a body", input, issueUUID)
		}
		f.next++
		id := f.commentID(f.next)
		f.comments[id] = input.Body
		fmt.Fprintf(w, `{"data":{"commentCreate":{"success":true,"comment":{"id":%q,"url":"https://linear.app/acme/issue/CIA-123/port#comment-%s"}}}}`, id, id[:8])
	case updateMutation:
		var id string
		var input struct{ Body string }
		f.vars(req.Variables, map[string]any{"id": &id, "input": &input})
		f.log = append(f.log, "commentUpdate "+id)
		if _, ok := f.comments[id]; !ok {
			w.WriteHeader(f.notFoundCode)
			io.WriteString(w, `{"errors":[{"message":"Entity not found: Comment","path":["commentUpdate"],"extensions":{"type":"invalid input","code":"INPUT_ERROR","userPresentableMessage":"Could not find referenced Comment."}}],"data":null}`)
			return
		}
		f.comments[id] = input.Body
		fmt.Fprintf(w, `{"data":{"commentUpdate":{"success":true,"comment":{"id":%q,"url":"https://linear.app/acme/issue/CIA-123/port#comment-x"}}}}`, id)
	default:
		f.t.Errorf("unexpected GraphQL document %q", req.Query)
		w.WriteHeader(http.StatusBadRequest)
	}
}

// vars decodes the variables into want, failing on any missing or extra one
// and on unknown fields inside them.
func (f *fakeLinear) vars(got map[string]json.RawMessage, want map[string]any) {
	if len(got) != len(want) {
		f.t.Errorf("variables %v, want exactly %d", got, len(want))
	}
	for name, dst := range want {
		dec := json.NewDecoder(strings.NewReader(string(got[name])))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			f.t.Errorf("variable %s = %s: %v", name, got[name], err)
		}
	}
}

func (f *fakeLinear) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.log
	f.log = nil
	return out
}

func newTracker(t *testing.T, url string, timeout time.Duration) *Tracker {
	t.Helper()
	tr, err := New(Config{APIKey: apiKey, URL: url + "/graphql", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestUpsertCreatesThenUpdatesInPlace(t *testing.T) {
	f, srv := newFake(t)
	tr := newTracker(t, srv.URL, 0)
	ctx := context.Background()

	c, err := tr.Upsert(ctx, "CIA-123", "", "## Checkpoint Status\n\nfirst")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != f.commentID(1) || !strings.HasPrefix(c.URL, "https://linear.app/acme/issue/CIA-123/") {
		t.Fatalf("created %+v", c)
	}
	if got := f.requests(); !reflect.DeepEqual(got, []string{"issue CIA-123", "commentCreate"}) {
		t.Fatalf("requests %q", got)
	}

	c2, err := tr.Upsert(ctx, "CIA-123", c.ID, "## Checkpoint Status\n\nsecond")
	if err != nil {
		t.Fatal(err)
	}
	if c2.ID != c.ID {
		t.Fatalf("update returned %s, want %s", c2.ID, c.ID)
	}
	if got := f.requests(); !reflect.DeepEqual(got, []string{"commentUpdate " + c.ID}) {
		t.Fatalf("requests %q", got)
	}
	if len(f.comments) != 1 || f.comments[c.ID] != "## Checkpoint Status\n\nsecond" {
		t.Fatalf("comments %v: want one, updated", f.comments)
	}

	// The identifier is resolved once per tracker (lower case is the same issue).
	if _, err := tr.Upsert(ctx, "cia-123", "", "again"); err != nil {
		t.Fatal(err)
	}
	if got := f.requests(); !reflect.DeepEqual(got, []string{"commentCreate"}) {
		t.Fatalf("requests %q", got)
	}
}

func TestUpsertRecreatesADeletedComment(t *testing.T) {
	for _, code := range []int{http.StatusOK, http.StatusBadRequest} {
		t.Run(fmt.Sprint("not found as HTTP ", code), func(t *testing.T) {
			f, srv := newFake(t)
			f.notFoundCode = code
			tr := newTracker(t, srv.URL, 0)
			gone := "deadbeef-0000-4000-8000-000000000000"
			c, err := tr.Upsert(context.Background(), "CIA-123", gone, "status")
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != f.commentID(1) {
				t.Fatalf("got %+v, want the new comment", c)
			}
			if got := f.requests(); !reflect.DeepEqual(got, []string{"commentUpdate " + gone, "issue CIA-123", "commentCreate"}) {
				t.Fatalf("requests %q", got)
			}
		})
	}
}

func TestUpsertWithAnIDThatIsNotLinearsCreates(t *testing.T) {
	f, srv := newFake(t)
	tr := newTracker(t, srv.URL, 0)
	if _, err := tr.Upsert(context.Background(), issueUUID, "123456789", "status"); err != nil {
		t.Fatal(err)
	}
	// A UUID issue needs no lookup; a GitHub-style ID is not updated.
	if got := f.requests(); !reflect.DeepEqual(got, []string{"commentCreate"}) {
		t.Fatalf("requests %q", got)
	}
}

func TestUpsertServerErrorSaysWhatHappened(t *testing.T) {
	f, srv := newFake(t)
	f.status = http.StatusServiceUnavailable
	tr := newTracker(t, srv.URL, 0)
	id := "c0ffee00-0000-4000-8000-000000000001"
	_, err := tr.Upsert(context.Background(), "CIA-123", id, "status")
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindHTTP || e.Status != 503 || e.Op != "update comment" {
		t.Fatalf("err = %#v", err)
	}
	if line := tracker.FailureLine("Linear", err); line != "Failed: Linear update (HTTP 503) — status not persisted to issue tracker." {
		t.Fatalf("FailureLine = %q", line)
	}
	if errors.Is(err, tracker.ErrUnreachable) {
		t.Fatal("a 503 answer is not unreachable")
	}
	if got := f.requests(); !reflect.DeepEqual(got, []string{"HTTP 503"}) {
		t.Fatalf("a 5xx must not fall through to create: requests %q", got)
	}
}

func TestUpsertRefusedKeyHint(t *testing.T) {
	f, srv := newFake(t)
	f.status = http.StatusBadRequest // Linear answers a bad key with 400 and authentication_error
	tr := newTracker(t, srv.URL, 0)
	_, err := tr.Upsert(context.Background(), "CIA-123", "", "status")
	want := "Linear find issue: HTTP 400: Bad Request — Your API key is not valid. (the API key was refused: check LINEAR_API_KEY)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestUpsertUnknownIssue(t *testing.T) {
	f, srv := newFake(t)
	tr := newTracker(t, srv.URL, 0)
	_, err := tr.Upsert(context.Background(), "CIA-999", "", "status")
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindAPI {
		t.Fatalf("err = %#v", err)
	}
	want := "Linear find issue: API error: Entity not found: Issue — Could not find referenced Issue. (no Linear issue CIA-999, or the API key cannot see it)"
	if err.Error() != want {
		t.Fatalf("Error() = %q\nwant      %q", err, want)
	}
	if got := f.requests(); !reflect.DeepEqual(got, []string{"issue CIA-999"}) {
		t.Fatalf("requests %q", got)
	}
}

func TestUpsertSendsAnOAuthTokenAsGiven(t *testing.T) {
	f, srv := newFake(t)
	f.auth = "Bearer lin_oauth_x"
	tr, err := New(Config{APIKey: "Bearer lin_oauth_x", URL: srv.URL + "/graphql"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Upsert(context.Background(), "CIA-123", "", "status"); err != nil {
		t.Fatal(err)
	}
}

func TestUpsertTimeout(t *testing.T) {
	tr := newTracker(t, apicalltest.StalledServer(t), 100*time.Millisecond)
	_, err := tr.Upsert(context.Background(), "CIA-123", "", "status")
	apicalltest.RequireTimeout(t, err)
	if err.Error() != "Linear find issue: timed out after 100ms" {
		t.Fatalf("Error() = %q", err)
	}
}

func TestUpsertUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	tr := newTracker(t, url, 0)
	_, err := tr.Upsert(context.Background(), issueUUID, "", "status")
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindUnreachable || !errors.Is(err, tracker.ErrUnreachable) {
		t.Fatalf("err = %#v", err)
	}
	if got := tracker.FailureLine("Linear", err); got != "Failed: Linear update (unreachable) — status not persisted to issue tracker." {
		t.Fatalf("FailureLine = %q", got)
	}
}

func TestUpsertNonJSONAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>captive portal</html>")
	}))
	t.Cleanup(srv.Close)
	tr := newTracker(t, srv.URL, 0)
	_, err := tr.Upsert(context.Background(), issueUUID, "", "status")
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindResponse || !strings.Contains(err.Error(), "not GraphQL JSON") {
		t.Fatalf("err = %v", err)
	}
}

func TestConfigAndIssueValidation(t *testing.T) {
	for _, cfg := range []Config{{APIKey: ""}, {APIKey: "k", URL: "linear.app/graphql"}, {APIKey: "k", URL: "file:///x"}} {
		if _, err := New(cfg); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("New(%+v) err = %v, want ErrInvalid", cfg, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("no request may be sent for a bad issue")
	}))
	t.Cleanup(srv.Close)
	tr := newTracker(t, srv.URL, 0)
	for _, issue := range []string{"", "42", "CIA 1", "CIA-", "-12", `CIA-1"}`} {
		if _, err := tr.Upsert(context.Background(), issue, "", "b"); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("issue %q: err = %v, want ErrInvalid", issue, err)
		}
	}
}

func FuzzParseResponse(f *testing.F) {
	f.Add([]byte(`{"data":{"commentCreate":{"success":true,"comment":{"id":"c1","url":"u"}}}}`), "commentCreate")
	f.Add([]byte(`{"data":{"commentUpdate":{"success":false,"comment":null}}}`), "commentUpdate")
	f.Add([]byte(`{"data":null,"errors":[{"message":"Entity not found: Comment","extensions":{"type":"invalid input","userPresentableMessage":"Could not find referenced Comment."}}]}`), "commentUpdate")
	f.Add([]byte(`{"errors":[{"message":"x"},{"message":"y"}]}`), "issue")
	f.Add([]byte(`{"data":{"issue":{"id":"5f0b2a8e-1c3d-4e5f-8a9b-0c1d2e3f4a5b"}}}`), "issue")
	f.Add([]byte(`[1,2]`), "issue")
	f.Fuzz(func(t *testing.T, body []byte, field string) {
		data, errs, err := parseResponse(body, field)
		switch {
		case err != nil:
			if data != nil || errs != nil {
				t.Fatal("an unreadable response returned data or errors")
			}
		case len(errs) > 0:
			if data != nil {
				t.Fatal("errors and data together")
			}
			if m := errs.message(); m == "" || strings.ContainsAny(m, "\r\n") {
				t.Fatalf("error message %q", m)
			}
		default:
			if len(data) == 0 || string(data) == "null" {
				t.Fatalf("accepted empty data.%s from %q", field, body)
			}
			c, err := parseCommentPayload(data)
			if err == nil && strings.TrimSpace(c.ID) == "" {
				t.Fatalf("accepted a comment without an ID from %q", body)
			}
		}
	})
}
