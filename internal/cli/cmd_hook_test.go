package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/gofrs/flock"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/claude"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/memstore"
)

// runHookCmd runs `ckpt args...` with stdin and vars against store (nil:
// the filestore found from workDir) and returns the exit code and streams.
func runHookCmd(t testing.TB, store ckpt.Store, workDir, stdin string, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &Env{
		IOStreams: IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Getenv:    func(k string) string { return vars[k] },
		WorkDir:   workDir,
		Now:       func() time.Time { return t0 },
		Args:      args,
	}
	code := run(&factory{env: env, store: store})
	return code, out.String(), errOut.String()
}

// checkFailForward asserts what every hook call guarantees: exit 0, stdout
// empty or one JSON object under the 10,000-character limit, at most one
// stderr line.
func checkFailForward(t testing.TB, code int, out, errOut string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", code, errOut)
	}
	if out != "" {
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("stdout is not one JSON object: %v: %q", err, out)
		}
		if n := len(utf16.Encode([]rune(out))); n >= 10000 {
			t.Fatalf("stdout is %d characters, over Claude Code's limit", n)
		}
	}
	if strings.Count(errOut, "\n") > 1 || errOut != "" && !strings.HasSuffix(errOut, "\n") {
		t.Fatalf("stderr is not one line: %q", errOut)
	}
}

// TestHookNeverFails runs `ckpt hook` the ways a client or a person might
// get wrong: every one exits 0 with at most one warning line.
func TestHookNeverFails(t *testing.T) {
	store := memstore.New()
	payload := `{"session_id":"s1","hook_event_name":"Stop","last_assistant_message":"hi"}`
	cases := []struct {
		name, stdin string
		vars        map[string]string
		args        []string
		warn        string
	}{
		{"no event", payload, nil, []string{"hook"}, "takes one event name"},
		{"two events", payload, nil, []string{"hook", "Stop", "Stop"}, "takes one event name"},
		{"unknown event", payload, nil, []string{"hook", "TeammateIdle"}, `unknown hook event "TeammateIdle"`},
		{"unknown flag", payload, map[string]string{"CKPT_ID": "j"}, []string{"hook", "Stop", "--brand-new"}, ""},
		{"bad client", payload, map[string]string{"CKPT_ID": "j"}, []string{"hook", "Stop", "--client", "emacs"}, `unknown client "emacs"`},
		{"garbage", "{{{", nil, []string{"hook", "Stop"}, "not a JSON object"},
		{"binary", "\x00\xff\xfe", nil, []string{"hook", "SessionStart"}, "not a JSON object"},
		{"no checkpoint", `{}`, nil, []string{"hook", "Stop"}, "set CKPT_ID"},
		{"bad clock", payload, map[string]string{"CKPT_ID": "j", "CKPT_NOW": "now"}, []string{"hook", "Stop"}, "CKPT_NOW"},
		{"bad timeout", payload, map[string]string{"CKPT_ID": "j", "CKPT_HOOK_TIMEOUT": "-1s"}, []string{"hook", "Stop"}, "CKPT_HOOK_TIMEOUT"},
		{"ok", payload, map[string]string{"CKPT_ID": "j"}, []string{"hook", "Stop"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runHookCmd(t, store, t.TempDir(), tc.stdin, tc.vars, tc.args...)
			checkFailForward(t, code, out, errOut)
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if tc.warn == "" && errOut != "" || tc.warn != "" && !strings.Contains(errOut, tc.warn) {
				t.Errorf("stderr %q, want a warning with %q", errOut, tc.warn)
			}
		})
	}
	c, err := store.Get(context.Background(), "j", 0)
	if err != nil || c.Meta["last_message"] == nil {
		t.Fatalf("the working calls recorded nothing: %v %+v", err, c)
	}
}

// TestHookNoStore: without a store the hook says how to make one.
func TestHookNoStore(t *testing.T) {
	code, out, errOut := runHookCmd(t, nil, t.TempDir(), `{"session_id":"s"}`, nil, "hook", "SessionStart")
	checkFailForward(t, code, out, errOut)
	if out != "" || !strings.Contains(errOut, "run ckpt init") {
		t.Fatalf("stdout %q stderr %q", out, errOut)
	}
}

// newFileStore makes a filestore in a temporary project and returns the
// project directory and the store.
func newFileStore(t testing.TB) (string, *filestore.Store) {
	t.Helper()
	dir := t.TempDir()
	st, err := filestore.Init(filepath.Join(dir, ".ckpt"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

func createCheckpoint(t testing.TB, st ckpt.Store, id string) {
	t.Helper()
	title := "t"
	e := ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{Agent: "t"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	if _, err := st.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestBoundedStoreLocked: while another open file description holds the
// checkpoint's flock, Append gives up at the deadline, writing nothing;
// after the release it writes.
func TestBoundedStoreLocked(t *testing.T) {
	_, st := newFileStore(t)
	createCheckpoint(t, st, "kai-7/a")
	lock := flock.New(filepath.Join(st.Dir(), "checkpoints", "kai-7+a", "lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	bs := &boundedStore{Store: st}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	e := ckpt.MustEvent(ckpt.EventNote, t0, ckpt.Actor{}, ckpt.Note{Text: "x"})
	_, err := bs.Append(ctx, "kai-7/a", e, ckpt.AppendOptions{})
	if err == nil || !strings.Contains(err.Error(), "locked by another process") {
		t.Fatalf("Append under a held lock: %v", err)
	}
	if c, _ := st.Get(context.Background(), "kai-7/a", 0); c.Rev != 1 {
		t.Fatalf("rev %d after a refused append", c.Rev)
	}
	lock.Unlock()
	res, err := bs.Append(context.Background(), "kai-7/a", e, ckpt.AppendOptions{})
	if err != nil || res.State.Rev != 2 {
		t.Fatalf("Append after the release: %v %+v", err, res)
	}
	// A new checkpoint has no lock file yet: nothing to wait for.
	createCheckpoint(t, bs, "fresh")
}

func TestBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	block := make(chan struct{})
	defer close(block)
	if err := bounded(ctx, func() error { <-block; return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a blocked function: %v", err)
	}
	if err := bounded(context.Background(), func() error { panic("boom") }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("a panicking function: %v", err)
	}
	want := errors.New("mine")
	if err := bounded(context.Background(), func() error { return want }); err != want {
		t.Fatalf("the function's error: %v", err)
	}
}

func TestTrackedPlan(t *testing.T) {
	s := &hookSteps{project: "/work/app"}
	meta := func(p string) *ckpt.Checkpoint {
		raw, _ := json.Marshal(map[string]string{"planPath": p})
		return &ckpt.Checkpoint{Meta: map[string]json.RawMessage{"plan": raw}}
	}
	cases := []struct {
		c    *ckpt.Checkpoint
		path string
		want bool
	}{
		{meta("/work/app/plans/a/plan.md"), "/work/app/plans/a/plan.md", true},
		{meta("plans/a/plan.md"), "/work/app/plans/a/plan.md", true},
		{meta("/work/app/plans/a/../a/plan.md"), "/work/app/plans/a/plan.md", true},
		{meta("/work/app/plans/b/plan.md"), "/work/app/plans/a/plan.md", false},
		{meta(""), "/work/app/plan.md", false},
		{&ckpt.Checkpoint{}, "/work/app/plan.md", false},
		{&ckpt.Checkpoint{Meta: map[string]json.RawMessage{"plan": json.RawMessage(`"x"`)}}, "/work/app/plan.md", false},
	}
	for i, tc := range cases {
		if got := s.trackedPlan(tc.c, tc.path); got != tc.want {
			t.Errorf("case %d: trackedPlan(%s) = %v, want %v", i, tc.path, got, tc.want)
		}
	}
}

func TestFindRepoRoot(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "repo", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := findRepoRoot(deep); got != "" && strings.HasPrefix(got, dir) {
		t.Fatalf("no repository yet, got %s", got)
	}
	// A worktree's .git is a file.
	if err := os.WriteFile(filepath.Join(dir, "repo", ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := findRepoRoot(deep); got != filepath.Join(dir, "repo") {
		t.Fatalf("findRepoRoot = %q", got)
	}
	if findRepoRoot("") != "" {
		t.Fatal("an empty start has no repository")
	}
}

func TestIsTruthy(t *testing.T) {
	for _, v := range []string{"1", "true", "TRUE", " yes ", "on", "t"} {
		if !isTruthy(v) {
			t.Errorf("isTruthy(%q) = false", v)
		}
	}
	for _, v := range []string{"", "0", "false", "off", "no", "2", "loop"} {
		if isTruthy(v) {
			t.Errorf("isTruthy(%q) = true", v)
		}
	}
}

// FuzzHookPayload feeds arbitrary bytes to every event as its payload (run
// as `ckpt hook EVENT` runs it, without cobra around it): it prints nothing
// or one JSON object of the fields the event may print (additionalContext
// for SessionStart and for the prompt that creates the checkpoint, a
// decision for Stop), under the limit, and at most one warning line.
func FuzzHookPayload(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"s1","source":"startup"}`,
		`{"session_id":"s1","tool_name":"Write","tool_input":{"file_path":"/a/b.go"},"tool_response":{"type":"create"},"tool_use_id":"t"}`,
		`{"session_id":"s1","tool_name":"apply_patch","tool_input":{"command":"*** Add File: x\n*** Update File: ../../etc/passwd"}}`,
		`{"session_id":"s1","agent_id":"a/../b","agent_type":"Explore","last_assistant_message":"done\nmore"}`,
		`{"session_id":"s1","stop_hook_active":"yes","last_assistant_message":"TASK_COMPLETE"}`,
		`{"sessionId":12,"trigger":"manual","custom_instructions":"` + strings.Repeat("x", 400) + `"}`,
		`{"session_id":"..","cwd":"/"}`, `null`, `[]`, ``, `{"session_id":"\u0000"}`,
	} {
		f.Add(seed)
	}
	events := []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "SubagentStop", "Stop", "PreCompact", "SessionEnd"}
	allowed := map[string]bool{"hookSpecificOutput": true, "decision": true, "reason": true}
	f.Fuzz(func(t *testing.T, payload string) {
		store := memstore.New()
		for _, ev := range events {
			var out, errOut bytes.Buffer
			o := &HookOptions{
				IO:        IOStreams{In: strings.NewReader(payload), Out: &out, ErrOut: &errOut},
				Event:     ev,
				Now:       func() time.Time { return t0 },
				Getenv:    func(string) string { return "" },
				WorkDir:   "/nonexistent-ckpt-fuzz",
				OpenStore: func(string, io.Writer) (ckpt.Store, error) { return store, nil },
				Loop:      claude.TaskLoop{Enabled: true},
			}
			runHook(context.Background(), o)
			checkFailForward(t, 0, out.String(), errOut.String())
			if out.Len() == 0 {
				continue
			}
			var v map[string]json.RawMessage
			json.Unmarshal(out.Bytes(), &v)
			for k := range v {
				if !allowed[k] {
					t.Fatalf("%s printed field %q: %s", ev, k, out.String())
				}
			}
			if _, ok := v["decision"]; ok && ev != "Stop" {
				t.Fatalf("%s printed a decision: %s", ev, out.String())
			}
			if raw, ok := v["hookSpecificOutput"]; ok {
				var specific struct {
					HookEventName string `json:"hookEventName"`
				}
				json.Unmarshal(raw, &specific)
				if ev != "SessionStart" && ev != "UserPromptSubmit" || specific.HookEventName != ev {
					t.Fatalf("%s printed hookSpecificOutput for %q: %s", ev, specific.HookEventName, out.String())
				}
			}
		}
	})
}
