package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeLinear is Linear's GraphQL API as the tracker step uses it: it
// checks the key and each request, answers the issue lookup, creates one
// comment and updates it in place, and records the operations.
type fakeLinear struct {
	t      *testing.T
	mu     sync.Mutex
	ops    []string
	status int // when not 0, every request gets it
}

const fakeCommentID = "5d3f1c1e-0a61-4c5e-9a65-2f0a4b8e9d10"

func (l *fakeLinear) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status != 0 {
		w.WriteHeader(l.status)
		return
	}
	var in struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if r.Method != http.MethodPost || r.Header.Get("Authorization") != "lin-key" || json.NewDecoder(r.Body).Decode(&in) != nil {
		l.t.Errorf("Linear request %s, Authorization %q", r.Method, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	input, _ := in.Variables["input"].(map[string]any)
	body, _ := input["body"].(string)
	switch {
	case strings.Contains(in.Query, "issue(id: $id)"):
		l.ops = append(l.ops, fmt.Sprint("issue ", in.Variables["id"]))
		io.WriteString(w, `{"data":{"issue":{"id":"9cfb482a-81e3-4154-b5b9-2c805e70a02d","identifier":"CIA-123"}}}`)
	case strings.Contains(in.Query, "commentCreate") && strings.HasPrefix(body, "## Checkpoint Status\n"):
		l.ops = append(l.ops, "create")
		io.WriteString(w, `{"data":{"commentCreate":{"success":true,"comment":{"id":"`+fakeCommentID+`","url":"https://linear.app/c"}}}}`)
	case strings.Contains(in.Query, "commentUpdate") && in.Variables["id"] == fakeCommentID && strings.HasPrefix(body, "## Checkpoint Status\n"):
		l.ops = append(l.ops, "update")
		io.WriteString(w, `{"data":{"commentUpdate":{"success":true,"comment":{"id":"`+fakeCommentID+`","url":"https://linear.app/c"}}}}`)
	default:
		l.t.Errorf("unexpected Linear request %q %v", in.Query, in.Variables)
		w.WriteHeader(http.StatusBadRequest)
	}
}

func (l *fakeLinear) took() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ops := strings.Join(l.ops, ",")
	l.ops = nil
	return ops
}

// TestHookTrackerStep: the hooks' final checkpoint in a project with a
// Linear issue (.ccc-state.json linearIssue, LINEAR_API_KEY) writes
// .ccc-progress.md in ckpt and has ckpt-server, a child process, upsert the
// issue's status comment; a failure of that step is the hook's one
// warning, in the completion report's words, and a missing ckpt-server is
// reported as such. ckpt itself links no tracker (TestLeanBinary).
func TestHookTrackerStep(t *testing.T) {
	bin := ckptBinary(t)
	dir := hookProject(t, bin)
	linear := &fakeLinear{t: t}
	srv := httptest.NewServer(linear)
	defer srv.Close()
	state := filepath.Join(dir, ".ccc-state.json")
	if err := os.WriteFile(state, []byte(`{"linearIssue": "CIA-123", "phase": "execution"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"CKPT_ID=job", "LINEAR_API_KEY=lin-key", "LINEAR_API_URL=" + srv.URL}
	// PreCompact, not SessionEnd: its 5 s budget holds on a loaded machine.
	payload := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreCompact","trigger":"manual"}`, dir)
	hook := func(bin string, more ...string) (int, string, string) {
		return hookRun(t, bin, dir, "PreCompact", payload, append(env, more...)...)
	}

	code, out, errOut := hook(bin)
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("ckpt hook PreCompact: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if ops := linear.took(); ops != "issue CIA-123,create" {
		t.Errorf("Linear operations %q, want the issue looked up and the comment created", ops)
	}
	if data := readFile(t, state); !strings.Contains(string(data), `"checkpointCommentId": "`+fakeCommentID+`"`) {
		t.Errorf("the comment's ID is not in .ccc-state.json:\n%s", data)
	}
	if data := readFile(t, filepath.Join(dir, ".ccc-progress.md")); !strings.Contains(string(data), "Ship it") {
		t.Errorf(".ccc-progress.md:\n%s", data)
	}

	// The next checkpoint updates the same comment.
	if code, out, errOut := hook(bin); code != 0 || out != "" || errOut != "" {
		t.Fatalf("second ckpt hook PreCompact: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if ops := linear.took(); ops != "update" {
		t.Errorf("Linear operations %q, want the comment updated in place", ops)
	}

	linear.mu.Lock()
	linear.status = http.StatusServiceUnavailable
	linear.mu.Unlock()
	code, out, errOut = hook(bin)
	assertOneWarning(t, "PreCompact", code, out, errOut,
		"final step checkpoint (auto profile) failed: 1 of 2 steps failed: Failed: Linear update (HTTP 503) — status not persisted to issue tracker.")

	// A ckpt without ckpt-server beside it (nor on PATH) says so.
	alone := filepath.Join(t.TempDir(), "ckpt")
	if err := os.Link(bin, alone); err != nil {
		data := readFile(t, bin)
		if err := os.WriteFile(alone, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut = hook(alone, "PATH=/usr/bin:/bin") // git, and no ckpt-server a developer installed
	assertOneWarning(t, "PreCompact", code, out, errOut, "Failed: Linear update (ckpt-server is not installed beside ckpt")
}
