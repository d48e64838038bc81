package fourstep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
	"github.com/ckpt-dev/ckpt/internal/tracker"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

// Tests of the four-step checkpoint: real git in a temporary repository,
// GitHub and Linear faked by local servers that check every request.

// fakeGitHub is a GitHub issues API that accepts exactly the requests
// tracker/github sends for an upsert on acme/app#42 and fails the test on
// anything else.
type fakeGitHub struct {
	t      *testing.T
	mu     sync.Mutex
	status int               // when not 0, every request gets this status
	bodies map[string]string // comment ID -> body
	calls  []string          // "POST …", "PATCH …"
	nextID int
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, r.Method+" "+r.URL.Path)
	check := func(ok bool, what string, args ...any) bool {
		if !ok {
			g.t.Errorf("GitHub request %s %s: "+what, append([]any{r.Method, r.URL.Path}, args...)...)
			w.WriteHeader(http.StatusBadRequest)
		}
		return ok
	}
	if !check(r.Header.Get("Authorization") == "Bearer gh-test-token", "Authorization %q", r.Header.Get("Authorization")) ||
		!check(r.Header.Get("Accept") == "application/vnd.github+json", "Accept %q", r.Header.Get("Accept")) ||
		!check(r.Header.Get("X-GitHub-Api-Version") == "2022-11-28", "API version %q", r.Header.Get("X-GitHub-Api-Version")) {
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	data, _ := io.ReadAll(r.Body)
	if !check(json.Unmarshal(data, &in) == nil && strings.HasPrefix(in.Body, "## Checkpoint Status\n"), "body %q", data) {
		return
	}
	if g.status != 0 {
		w.WriteHeader(g.status)
		io.WriteString(w, `{"message":"Service Unavailable"}`)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/repos/acme/app/issues/42/comments":
		g.nextID++
		id := 1000 + g.nextID
		g.bodies[strconv.Itoa(id)] = in.Body
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"id": id, "html_url": "https://github.com/acme/app/issues/42#issuecomment-" + strconv.Itoa(id)})
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/acme/app/issues/comments/"):
		id := strings.TrimPrefix(r.URL.Path, "/repos/acme/app/issues/comments/")
		if _, ok := g.bodies[id]; !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not Found"}`)
			return
		}
		g.bodies[id] = in.Body
		json.NewEncoder(w).Encode(map[string]any{"id": json.Number(id)})
	default:
		check(false, "unexpected request")
	}
}

// checkpointFixture is a project directory with a checkpoint in a memstore.
type checkpointFixture struct {
	t     *testing.T
	dir   string
	store *memstore.Store
	now   time.Time
	out   bytes.Buffer
}

func newCheckpointFixture(t *testing.T) *checkpointFixture {
	t.Helper()
	fx := &checkpointFixture{t: t, dir: t.TempDir(), store: memstore.New(), now: t0}
	appendAll(t, fx.store, "feature/CIA-123",
		ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{
			Patch: ckpt.Patch{Title: ptr("CSV import"), TaskID: ptr("CIA-123"), FilesModified: []string{"parse.go"}},
			Steps: []ckpt.Step{{ID: "parse", Title: "Write the parser"}, {ID: "header", Title: "Write the header test"}},
		}),
		ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "parse", Status: ckpt.StepInProgress}),
		ckpt.MustEvent(ckpt.EventDecision, t0, ckpt.Actor{}, ckpt.DecisionData{Text: "Use encoding/csv", Reason: "it handles quoting"}),
	)
	return fx
}

func (fx *checkpointFixture) options(profile string, tr Tracker) Options {
	fx.out.Reset()
	return Options{
		Out:     &fx.out,
		Store:   fx.store,
		ID:      "feature/CIA-123",
		Profile: profile,
		Dir:     fx.dir,
		Tracker: tr,
		Now:     func() time.Time { return fx.now },
	}
}

func (fx *checkpointFixture) run(profile string, tr Tracker) *Report {
	fx.t.Helper()
	r, err := Run(context.Background(), fx.options(profile, tr))
	if err != nil {
		fx.t.Fatalf("Run: %v\n%s", err, fx.out.String())
	}
	return r
}

func (fx *checkpointFixture) writeState(s string) {
	fx.t.Helper()
	if err := os.WriteFile(filepath.Join(fx.dir, ccc.StateFile), []byte(s), 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

func (fx *checkpointFixture) readState() map[string]any {
	fx.t.Helper()
	data, err := os.ReadFile(filepath.Join(fx.dir, ccc.StateFile))
	if err != nil {
		fx.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		fx.t.Fatalf("%s is not JSON: %v\n%s", ccc.StateFile, err, data)
	}
	return m
}

func TestCheckpointGitHubCommentCreatedThenUpdatedInPlace(t *testing.T) {
	fx := newCheckpointFixture(t)
	gh := &fakeGitHub{t: t, bodies: map[string]string{}}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	fx.writeState(`{"phase": "execution", "taskIndex": 1, "activeTaskFiles": ["x.go"], "customTool": {"keep": true}}`)
	tr := Tracker{GitHubRepo: "acme/app", GitHubIssue: "42", GitHubToken: "gh-test-token", GitHubURL: srv.URL, Timeout: 5 * time.Second}

	r := fx.run(ProfileAuto, tr)
	if r.Succeeded != 2 || r.Total != 2 || r.CommentID != "1001" {
		t.Fatalf("report %+v\n%s", r, fx.out.String())
	}
	if !strings.Contains(fx.out.String(), "GitHub status comment created on issue 42 (1001).\n") ||
		!strings.HasSuffix(fx.out.String(), "Checkpoint complete: 2/2 steps succeeded.\n") {
		t.Errorf("output:\n%s", fx.out.String())
	}
	st := fx.readState()
	if st["checkpointCommentId"] != "1001" || st["phase"] != "execution" || st["taskIndex"] != float64(1) {
		t.Errorf("state after the first checkpoint: %v", st)
	}
	if keep, _ := st["customTool"].(map[string]any); keep["keep"] != true {
		t.Errorf("a field of another tool was lost: %v", st)
	}
	if files, _ := st["activeTaskFiles"].([]any); len(files) != 1 || files[0] != "x.go" {
		t.Errorf("activeTaskFiles changed: %v", st["activeTaskFiles"])
	}
	first := gh.bodies["1001"]
	for _, want := range []string{"**Task:** 1 of 2 — Write the parser", "**Status:** In Progress", "**Decisions:** Use encoding/csv: it handles quoting", "**Blockers:** None"} {
		if !strings.Contains(first, want) {
			t.Errorf("first comment lacks %q:\n%s", want, first)
		}
	}

	// A later checkpoint updates the same comment, listing only the
	// decisions made since the last one.
	fx.now = t0.Add(time.Hour)
	appendAll(t, fx.store, "feature/CIA-123", ckpt.MustEvent(ckpt.EventDecision, fx.now.Add(-time.Minute), ckpt.Actor{}, ckpt.DecisionData{Text: "Keep IDs stable"}))
	r = fx.run(ProfileAuto, tr)
	if r.CommentID != "1001" || !strings.Contains(fx.out.String(), "GitHub status comment updated on issue 42 (1001).") {
		t.Fatalf("second checkpoint: %+v\n%s", r, fx.out.String())
	}
	if want := []string{"POST /repos/acme/app/issues/42/comments", "PATCH /repos/acme/app/issues/comments/1001"}; strings.Join(gh.calls, ",") != strings.Join(want, ",") {
		t.Errorf("requests %v, want %v", gh.calls, want)
	}
	if second := gh.bodies["1001"]; !strings.Contains(second, "**Decisions:** Keep IDs stable\n") {
		t.Errorf("the update should list only the new decision:\n%s", second)
	}

	// The stored comment was deleted on GitHub: a new one is created and its
	// ID stored.
	delete(gh.bodies, "1001")
	r = fx.run(ProfileAuto, tr)
	if r.CommentID != "1002" || fx.readState()["checkpointCommentId"] != "1002" {
		t.Errorf("after deletion: %+v, state %v", r, fx.readState())
	}
}

func TestCheckpointTrackerFailuresFailForward(t *testing.T) {
	fx := newCheckpointFixture(t)
	gh := &fakeGitHub{t: t, bodies: map[string]string{}, status: http.StatusServiceUnavailable}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	fx.writeState(`{"checkpointCommentId": "77", "phase": "execution"}`)
	before, _ := os.ReadFile(filepath.Join(fx.dir, ccc.StateFile))
	tr := Tracker{GitHubRepo: "acme/app", GitHubIssue: "42", GitHubToken: "gh-test-token", GitHubURL: srv.URL, Timeout: 5 * time.Second}

	r := fx.run(ProfileAuto, tr)
	want := "Checkpoint complete: 1/2 steps succeeded.\nFailed: GitHub update (HTTP 503) — status not persisted to issue tracker.\n"
	if r.Succeeded != 1 || !strings.HasSuffix(fx.out.String(), want) {
		t.Errorf("report %+v, output:\n%s\nwant the end:\n%s", r, fx.out.String(), want)
	}
	if !strings.Contains(fx.out.String(), "Warning: GitHub update failed: GitHub update comment: HTTP 503") {
		t.Errorf("no warning as it happened:\n%s", fx.out.String())
	}
	if _, err := os.Stat(filepath.Join(fx.dir, ccc.ProgressFile)); err != nil {
		t.Errorf("step 1 did not run: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(fx.dir, ccc.StateFile)); !bytes.Equal(before, after) {
		t.Errorf(".ccc-state.json changed by a failed upsert:\n%s", after)
	}

	// Unreachable: a closed port.
	srv.Close()
	r = fx.run(ProfileAuto, tr)
	if !strings.Contains(r.Summary(), "Failed: GitHub update (unreachable) — status not persisted to issue tracker.\n") {
		t.Errorf("unreachable: %s", r.Summary())
	}
}

func TestCheckpointLinearFromStateFile(t *testing.T) {
	fx := newCheckpointFixture(t)
	var mu sync.Mutex
	var ops []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "lin-key" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("Linear request %s %s, Authorization %q, Content-Type %q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var in struct {
			Query     string         `json:"query"`
			Variables map[string]any `json:"variables"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			t.Errorf("Linear request body: %v", err)
			return
		}
		switch {
		case strings.Contains(in.Query, "issue(id: $id)"):
			ops = append(ops, "issue "+in.Variables["id"].(string))
			io.WriteString(w, `{"data":{"issue":{"id":"9cfb482a-81e3-4154-b5b9-2c805e70a02d","identifier":"CIA-123"}}}`)
		case strings.Contains(in.Query, "commentCreate"):
			input, _ := in.Variables["input"].(map[string]any)
			if input["issueId"] != "9cfb482a-81e3-4154-b5b9-2c805e70a02d" || !strings.HasPrefix(input["body"].(string), "## Checkpoint Status\n") {
				t.Errorf("commentCreate input %v", input)
			}
			ops = append(ops, "create")
			io.WriteString(w, `{"data":{"commentCreate":{"success":true,"comment":{"id":"5d3f1c1e-0a61-4c5e-9a65-2f0a4b8e9d10","url":"https://linear.app/c"}}}}`)
		default:
			t.Errorf("unexpected Linear query %q", in.Query)
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	fx.writeState(`{"linearIssue": "CIA-123", "phase": "execution"}`)

	// No flags: the issue comes from .ccc-state.json, with LINEAR_API_KEY.
	r := fx.run(ProfileAuto, Tracker{LinearKey: "lin-key", LinearURL: srv.URL, Timeout: 5 * time.Second})
	if r.Succeeded != 2 || r.CommentID != "5d3f1c1e-0a61-4c5e-9a65-2f0a4b8e9d10" {
		t.Fatalf("report %+v\n%s", r, fx.out.String())
	}
	if strings.Join(ops, ",") != "issue CIA-123,create" {
		t.Errorf("Linear operations %v", ops)
	}
	if st := fx.readState(); st["checkpointCommentId"] != "5d3f1c1e-0a61-4c5e-9a65-2f0a4b8e9d10" || st["linearIssue"] != "CIA-123" {
		t.Errorf("state %v", st)
	}

	// Without a key there is no tracker to use: skipped.
	r = fx.run(ProfileAuto, Tracker{})
	if !strings.Contains(fx.out.String(), "Issue-tracker update skipped — no issue tracker configured.\n") || r.Succeeded != 2 {
		t.Errorf("without a key:\n%s", fx.out.String())
	}
	// A flag without a key is a failure that says what to set.
	r = fx.run(ProfileAuto, Tracker{LinearIssue: "CIA-123"})
	if !strings.Contains(r.Summary(), "Failed: Linear update (no API key: set LINEAR_API_KEY to a Linear personal API key) — status not persisted to issue tracker.") {
		t.Errorf("flag without key: %s", r.Summary())
	}

	// Step 3 alone, as ckpt-server runs it for the hooks' final checkpoint
	// (package autockpt): one step, and no progress file.
	os.Remove(filepath.Join(fx.dir, ccc.ProgressFile))
	fx.writeState(`{"linearIssue": "CIA-123"}`)
	mu.Lock()
	ops = nil
	mu.Unlock()
	o := fx.options(ProfileAuto, Tracker{LinearKey: "lin-key", LinearURL: srv.URL, Timeout: 5 * time.Second})
	o.TrackerOnly = true
	r, err := Run(context.Background(), o)
	if err != nil || r.Total != 1 || r.Succeeded != 1 || r.Steps[0].Name != "Linear update" || r.CommentID == "" {
		t.Fatalf("tracker only: %v, report %+v\n%s", err, r, fx.out.String())
	}
	if strings.Join(ops, ",") != "issue CIA-123,create" {
		t.Errorf("tracker only: Linear operations %v", ops)
	}
	if _, err := os.Stat(filepath.Join(fx.dir, ccc.ProgressFile)); !os.IsNotExist(err) {
		t.Errorf("tracker only wrote %s (%v)", ccc.ProgressFile, err)
	}
}

func TestCheckpointSettingsRefusedBeforeAnyStep(t *testing.T) {
	fx := newCheckpointFixture(t)
	cases := []struct {
		name string
		edit func(*Options)
		want string
		err  error
	}{
		{"two trackers", func(o *Options) {
			o.Tracker = Tracker{GitHubRepo: "a/b", GitHubIssue: "1", LinearIssue: "CIA-1"}
		}, "give one issue tracker", nil},
		{"repo without issue", func(o *Options) { o.Tracker = Tracker{GitHubRepo: "a/b"} }, "needs both --github-repo", nil},
		{"bad profile", func(o *Options) { o.Profile = "sometimes" }, "use manual or auto", ckpt.ErrInvalid},
		{"relative dir", func(o *Options) { o.Dir = "project" }, "not absolute", ckpt.ErrInvalid},
		{"missing dir", func(o *Options) { o.Dir = filepath.Join(fx.dir, "none") }, "is not a directory", ckpt.ErrInvalid},
		{"bad ID", func(o *Options) { o.ID = "../x" }, "IDs cannot refer to directories", ckpt.ErrInvalid},
		{"unknown ID", func(o *Options) { o.ID = "feature/none" }, "", ckpt.ErrNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := fx.options(ProfileManual, Tracker{})
			tc.edit(&o)
			_, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want one with %q (%v)", err, tc.want, tc.err)
			}
			if tc.err == nil && ckpt.ErrorCode(err) != ckpt.CodeInvalid {
				t.Errorf("code %s, want %s", ckpt.ErrorCode(err), ckpt.CodeInvalid)
			}
			if fx.out.Len() != 0 {
				t.Errorf("a step ran:\n%s", fx.out.String())
			}
		})
	}
	if _, err := os.Stat(filepath.Join(fx.dir, ccc.ProgressFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("progress file written by a refused run: %v", err)
	}
}

// gitRepo makes a git repository in dir with one commit of files.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testsupport.NeedCommand(t, "git", "the snapshots are real commits")
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
		"GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com",
		"GIT_CONFIG_NOSYSTEM": "1", "HOME": dir,
	} {
		t.Setenv(k, v)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "."}, {"commit", "-q", "-m", "initial"}} {
		testsupport.Git(t, dir, args...)
	}
}

func TestCheckpointManualProfileInGitRepository(t *testing.T) {
	fx := newCheckpointFixture(t)
	gitRepo(t, fx.dir, map[string]string{"parse.go": "package csv\n", "notes.txt": "n\n", ".gitignore": ".ccc-progress.md\n.ccc-state.json\n"})
	os.WriteFile(filepath.Join(fx.dir, "parse.go"), []byte("package csv\n\nfunc Parse() {}\n"), 0o644)
	os.WriteFile(filepath.Join(fx.dir, "header_test.go"), []byte("package csv\n"), 0o644)
	os.WriteFile(filepath.Join(fx.dir, "notes.txt"), []byte("changed\n"), 0o644)
	fx.writeState(`{"activeTaskFiles": ["header_test.go"]}`)

	r := fx.run(ProfileManual, Tracker{})
	if r.Succeeded != 4 || r.Total != 4 || r.Commit == "" {
		t.Fatalf("report %+v\n%s", r, fx.out.String())
	}
	if got := testsupport.Git(t, fx.dir, "show", "--name-only", "--format=", "HEAD"); got != "header_test.go\nparse.go\n" {
		t.Errorf("committed %q, want only the in-scope files", got)
	}
	if got := testsupport.Git(t, fx.dir, "status", "--porcelain"); got != " M notes.txt\n" {
		t.Errorf("status after the snapshot %q", got)
	}
	if msg := testsupport.Git(t, fx.dir, "log", "-1", "--format=%B"); !strings.HasPrefix(msg, "checkpoint(feature/CIA-123): Write the parser [0/2]\n") || !strings.Contains(msg, "Ckpt-Checkpoint: feature/CIA-123\n") {
		t.Errorf("commit message:\n%s", msg)
	}
	out := fx.out.String()
	prompt := r.Prompt
	if !strings.Contains(out, promptBox+"\n"+prompt+"\n\n"+promptCopy+"\n") || !strings.HasPrefix(prompt, "Resume CIA-123.") {
		t.Errorf("prompt box:\n%s", out)
	}
	md, _ := os.ReadFile(filepath.Join(fx.dir, ccc.ProgressFile))
	if p, err := ccc.ContinuationPrompt(md); err != nil || p != prompt {
		t.Errorf("printed prompt %q, the file's %q (%v)", prompt, p, err)
	}

	// Nothing in scope left: the snapshot skips, and says why.
	r = fx.run(ProfileManual, Tracker{})
	if r.Commit != "" || r.Succeeded != 4 || !strings.Contains(fx.out.String(), "Git snapshot skipped — nothing in scope to stage (1 dirty file out of scope left alone).\n") {
		t.Errorf("second run %+v:\n%s", r, fx.out.String())
	}
}

func TestCheckpointStepOneFailureGivesTemplatePrompt(t *testing.T) {
	fx := newCheckpointFixture(t)
	if err := os.Mkdir(filepath.Join(fx.dir, ccc.ProgressFile), 0o755); err != nil {
		t.Fatal(err)
	}
	r := fx.run(ProfileManual, Tracker{})
	want := "Checkpoint complete: 2/4 steps succeeded.\n" +
		"Failed: Progress file (.ccc-progress.md: file exists) — progress not saved to .ccc-progress.md.\n" +
		"Failed: Continuation prompt (.ccc-progress.md: is a directory) — printed the generic template instead.\n"
	if r.Summary() != want || r.Prompt != promptTemplate {
		t.Errorf("summary:\n%s\nwant:\n%s\nprompt %q", r.Summary(), want, r.Prompt)
	}
	// Not in a git repository: the snapshot skips (a skip is a success).
	if !strings.Contains(fx.out.String(), "Git snapshot skipped — ") {
		t.Errorf("output:\n%s", fx.out.String())
	}
}

func TestCheckpointCorruptStateFileIsLeftAlone(t *testing.T) {
	fx := newCheckpointFixture(t)
	gh := &fakeGitHub{t: t, bodies: map[string]string{}}
	srv := httptest.NewServer(gh)
	defer srv.Close()
	fx.writeState(`{"checkpointCommentId": "12", broken`)
	r := fx.run(ProfileAuto, Tracker{GitHubRepo: "acme/app", GitHubIssue: "42", GitHubToken: "gh-test-token", GitHubURL: srv.URL})
	if r.Succeeded != 2 {
		t.Errorf("report %+v", r)
	}
	out := fx.out.String()
	if !strings.Contains(out, "Warning: .ccc-state.json unreadable") || !strings.Contains(out, "Warning: comment ID 1001 not stored: .ccc-state.json is unreadable") {
		t.Errorf("output:\n%s", out)
	}
	if data, _ := os.ReadFile(filepath.Join(fx.dir, ccc.StateFile)); string(data) != `{"checkpointCommentId": "12", broken` {
		t.Errorf("a damaged state file was overwritten: %s", data)
	}
}

var t0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func appendAll(t *testing.T, st ckpt.Store, id string, events ...ckpt.Event) {
	t.Helper()
	for _, e := range events {
		if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatalf("append %s to %s: %v", e.Type, id, err)
		}
	}
}

// After a step completes, the progress file, its continuation prompt and
// the tracker comment agree on the current task (issue 11: the file listed
// one task as both completed and current, the tracker said 2 of 3 and the
// prompt 3 of 3).
func TestEveryViewAgreesOnTheCurrentTask(t *testing.T) {
	st := memstore.New()
	appendAll(t, st, "p",
		ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{
			Patch: ckpt.Patch{Title: ptr("Pipeline"), TaskID: ptr("CIA-9")},
			Steps: []ckpt.Step{{ID: "a", Title: "Fetch"}, {ID: "b", Title: "Parse"}, {ID: "c", Title: "Store"}},
		}),
		ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "a", Status: ckpt.StepDone}),
		ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "b", Status: ckpt.StepDone}),
		// current_step left on a finished step.
		ckpt.MustEvent(ckpt.EventUpdate, t0, ckpt.Actor{}, ckpt.Patch{CurrentStep: ptr("Parse")}),
	)
	c, err := st.Get(context.Background(), "p", 0)
	if err != nil {
		t.Fatal(err)
	}
	md, err := ccc.New().Export(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "## Current Task\n- None\n") || !strings.Contains(string(md), "- Parse ✓\n") {
		t.Errorf("a finished step is listed as current:\n%s", md)
	}
	if !strings.Contains(string(md), "Current task: Store (task 3 of 3).") {
		t.Errorf("prompt:\n%s", md)
	}
	u := tracker.UpdateFromCheckpoint(c, time.Time{}, t0)
	if u.Task != 3 || u.Total != 3 || u.Description != "Store" {
		t.Errorf("tracker says task %d of %d (%s)", u.Task, u.Total, u.Description)
	}
	if pos := c.Position(); pos.N != 3 || pos.M != 3 {
		t.Errorf("position %+v", pos)
	}
}

// The hooks write .ccc-progress.md only into projects that use seed 001:
// .ccc-state.json there, or a ccc mirror rooted there.
