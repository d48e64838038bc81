package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
	"github.com/ckpt-dev/ckpt/memstore"
)

// runHookCmd runs `ckpt args...` with stdin and vars against store (nil:
// the filestore found from workDir) and returns the exit code and streams.
func runHookCmd(t testing.TB, store ckpt.Store, workDir, stdin string, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut},
		Getenv:    func(k string) string { return vars[k] },
		WorkDir:   workDir,
		Now:       func() time.Time { return t0 },
		Args:      args,
	}
	code := runOn(env, store)
	return code, out.String(), errOut.String()
}

// checkFailForward asserts what every hook call guarantees through the
// command line: exit 0, and the output of testsupport.FailForward.
func checkFailForward(t testing.TB, code int, out, errOut string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr %q", code, errOut)
	}
	testsupport.FailForward(t, out, errOut)
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
	for _, event := range []string{"SessionStart", "PreToolUse"} {
		code, out, errOut := runHookCmd(t, nil, t.TempDir(), `{"session_id":"s"}`, nil, "hook", event)
		checkFailForward(t, code, out, errOut)
		if out != "" || !strings.Contains(errOut, "run ckpt init") {
			t.Fatalf("%s: stdout %q stderr %q", event, out, errOut)
		}
	}
}

// TestHookFindsTheNearestStore: a hook uses the store of the payload's
// cwd, else the nearest one above it (a .ckpt directory that is no store
// is passed over), and a damaged store where it works is reported, not
// passed over for another.
func TestHookFindsTheNearestStore(t *testing.T) {
	project := t.TempDir()
	st, err := filestore.Init(filepath.Join(project, filestore.StoreDirName), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	title := "t"
	if _, err := st.Append(context.Background(), "job", ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{Agent: "a"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(project, "sub")
	broken := filepath.Join(project, "broken")
	for _, dir := range []string{filepath.Join(sub, filestore.StoreDirName), filepath.Join(broken, filestore.StoreDirName)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(broken, filestore.StoreDirName, "config.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"CKPT_ID": "job"}
	preToolUse := func(cwd, command string) string {
		t.Helper()
		payload, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": map[string]string{"command": command}})
		code, out, errOut := runHookCmd(t, nil, cwd, string(payload), vars, "hook", "PreToolUse")
		checkFailForward(t, code, out, errOut)
		return errOut
	}
	reason := func() string {
		t.Helper()
		c, err := st.Get(context.Background(), "job", 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.Heartbeat.Presence == nil {
			return ""
		}
		return c.Heartbeat.Presence.Reason
	}
	for _, tc := range []struct{ cwd, command string }{{project, "at the root"}, {sub, "in sub"}, {filepath.Join(sub, filestore.StoreDirName), "in sub's .ckpt"}} {
		if errOut := preToolUse(tc.cwd, tc.command); errOut != "" {
			t.Fatalf("from %s: %q", tc.cwd, errOut)
		}
		if got, want := reason(), "Bash: "+tc.command; got != want {
			t.Fatalf("from %s the presence is %q; want %q", tc.cwd, got, want)
		}
	}
	errOut := preToolUse(broken, "in broken")
	if !strings.Contains(errOut, filepath.Join(broken, filestore.StoreDirName)) {
		t.Fatalf("from a damaged store: stderr %q; want it named", errOut)
	}
	if got := reason(); got != "Bash: in sub's .ckpt" {
		t.Fatalf("a hook at a damaged store beat the store above it: %q", got)
	}
}
