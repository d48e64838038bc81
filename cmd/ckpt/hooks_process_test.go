package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/gofrs/flock"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// Hook tests that need more than a script: another process holding a
// checkpoint's lock, a history damaged in the middle, and the wall time of
// `ckpt hook SessionEnd` (Claude Code gives SessionEnd hooks 1.5 s).

// hookRun runs `ckpt hook EVENT` in dir with payload on stdin and the
// given extra environment, and returns its exit code and both streams.
func hookRun(tb testing.TB, bin, dir, event, payload string, env ...string) (code int, stdout, stderr string) {
	tb.Helper()
	cmd := exec.Command(bin, "hook", event)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		tb.Fatalf("running ckpt hook %s: %v", event, err)
	}
	return code, out.String(), errOut.String()
}

// hookProject makes a project directory with a store and checkpoint "job"
// (two steps) and returns the directory.
func hookProject(tb testing.TB, bin string) string {
	tb.Helper()
	dir := tb.TempDir()
	store := filepath.Join(dir, ".ckpt")
	for _, args := range [][]string{
		{"--store", store, "init"},
		{"--store", store, "start", "job", "--title", "Ship it", "--step", "plan", "--step", "build"},
	} {
		if _, err := ckptRun(tb, bin, args...); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// assertOneWarning checks the fail-forward contract: exit 0, nothing on
// stdout, one `ckpt hook EVENT: warning:` line on stderr containing want.
func assertOneWarning(t *testing.T, event string, code int, stdout, stderr, want string) {
	t.Helper()
	if code != 0 || stdout != "" {
		t.Errorf("ckpt hook %s: exit %d, stdout %q; want exit 0 and no output", event, code, stdout)
	}
	prefix := "ckpt hook " + event + ": warning: "
	if !strings.HasPrefix(stderr, prefix) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("ckpt hook %s: stderr %q; want one %q line containing %q", event, stderr, prefix, want)
	}
}

// TestHookLockedCheckpoint: a checkpoint whose lock another process holds
// (this test process, with a real flock) makes every writing hook give up
// at its deadline with exit 0 and one warning, having written nothing; once
// the lock is free the same hook works.
func TestHookLockedCheckpoint(t *testing.T) {
	bin := ckptBinary(t)
	dir := hookProject(t, bin)
	cpDir := filepath.Join(dir, ".ckpt", "checkpoints", "job")
	before := readFile(t, filepath.Join(cpDir, "history.jsonl"))

	lock := flock.New(filepath.Join(cpDir, "lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	locked := true
	defer func() {
		if locked {
			lock.Unlock()
		}
	}()
	// The budget must outlast a hook's start-up under -race on a loaded
	// machine (so the deadline falls in the lock wait) and bounds how long
	// each locked call takes; the unlocked call below runs on the default.
	env := []string{"CKPT_ID=job", "CKPT_HOOK_TIMEOUT=1s"}
	stop := `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Planned it."}`
	sub := `{"session_id":"s1","hook_event_name":"SubagentStop","agent_id":"x1","agent_type":"Plan","last_assistant_message":"ok"}`
	post := `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"a.go"},"tool_use_id":"t1"}`
	for _, c := range []struct{ event, payload string }{{"Stop", stop}, {"SubagentStop", sub}, {"PostToolUse", post}} {
		code, out, errOut := hookRun(t, bin, dir, c.event, c.payload, env...)
		assertOneWarning(t, c.event, code, out, errOut, "the checkpoint is locked by another process")
	}
	// SessionEnd, without CKPT_HOOK_TIMEOUT: its own one-second budget.
	code, out, errOut := hookRun(t, bin, dir, "SessionEnd", `{"session_id":"s1","hook_event_name":"SessionEnd","reason":"logout"}`, "CKPT_ID=job")
	assertOneWarning(t, "SessionEnd", code, out, errOut, "locked by another process")
	if after := readFile(t, filepath.Join(cpDir, "history.jsonl")); !bytes.Equal(before, after) {
		t.Fatalf("the history changed while locked:\n%s", after)
	}

	lock.Unlock()
	locked = false
	code, out, errOut = hookRun(t, bin, dir, "Stop", stop, "CKPT_ID=job")
	if code != 0 || out != "" || errOut != "" {
		t.Fatalf("unlocked Stop: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	show, err := ckptRun(t, bin, "--store", filepath.Join(dir, ".ckpt"), "show", "job", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Rev  int64 `json:"rev"`
		Meta struct {
			LastMessage struct{ Text string } `json:"last_message"`
		} `json:"meta"`
	}
	if err := json.Unmarshal([]byte(show), &c); err != nil {
		t.Fatal(err)
	}
	if c.Rev != 2 || c.Meta.LastMessage.Text != "Planned it." {
		t.Fatalf("after the lock was released: rev %d, last message %q; want rev 2 and the message", c.Rev, c.Meta.LastMessage.Text)
	}
}

// TestHookDamagedHistory: a history with a flipped byte in its first line
// is reported by every hook, which exits 0 and appends nothing to it.
func TestHookDamagedHistory(t *testing.T) {
	bin := ckptBinary(t)
	dir := hookProject(t, bin)
	if _, err := ckptRun(t, bin, "--store", filepath.Join(dir, ".ckpt"), "step", "job", "plan", "--done"); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(dir, ".ckpt", "checkpoints", "job", "history.jsonl")
	data := readFile(t, hist)
	i := bytes.Index(data, []byte("Ship it"))
	if i < 0 {
		t.Fatalf("title not in the history:\n%s", data)
	}
	data[i] = 'Z' // "Zhip it": the line no longer matches its checksum
	if err := os.WriteFile(hist, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The state cache would hide the damage from readers; without it the
	// history is all there is.
	if err := os.Remove(filepath.Join(dir, ".ckpt", "checkpoints", "job", "state.json")); err != nil {
		t.Fatal(err)
	}
	env := []string{"CKPT_ID=job"}
	for _, c := range []struct{ event, payload string }{
		{"SessionStart", `{"session_id":"s2","hook_event_name":"SessionStart","source":"resume"}`},
		{"UserPromptSubmit", `{"session_id":"s2","hook_event_name":"UserPromptSubmit","prompt":"go on"}`},
		{"Stop", `{"session_id":"s2","hook_event_name":"Stop","last_assistant_message":"done"}`},
		{"PreCompact", `{"session_id":"s2","hook_event_name":"PreCompact","trigger":"auto"}`},
		{"SessionEnd", `{"session_id":"s2","hook_event_name":"SessionEnd","reason":"other"}`},
	} {
		code, out, errOut := hookRun(t, bin, dir, c.event, c.payload, env...)
		assertOneWarning(t, c.event, code, out, errOut, "store damaged")
	}
	if after := readFile(t, hist); !bytes.Equal(data, after) {
		t.Fatalf("a hook wrote to a damaged history:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ccc-progress.md")); err == nil {
		t.Fatal("the final checkpoint wrote .ccc-progress.md from a damaged checkpoint")
	}
}

// TestHookSessionStartLargeCheckpoint: the continuation prompt of a
// checkpoint far larger than a context can take (300 long steps, 200
// decisions, 500 files) still comes out as one JSON line under Claude
// Code's 10,000-character limit, counted in UTF-16 units as it counts.
func TestHookSessionStartLargeCheckpoint(t *testing.T) {
	bin := ckptBinary(t)
	dir := t.TempDir()
	st, err := filestore.Init(filepath.Join(dir, ".ckpt"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	title := "A very large task"
	var steps []ckpt.Step
	for i := range 300 {
		steps = append(steps, ckpt.Step{ID: fmt.Sprintf("s%03d", i), Title: strings.Repeat("步骤 with a long title 🙂 ", 8)})
	}
	events := []ckpt.Event{ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}, Steps: steps})}
	for i := range 200 {
		events = append(events, ckpt.MustEvent(ckpt.EventDecision, at, ckpt.Actor{}, ckpt.DecisionData{Text: fmt.Sprintf("Decision %d: %s", i, strings.Repeat("because ", 30))}))
	}
	var files []string
	for i := range 500 {
		files = append(files, fmt.Sprintf("src/package_%d/file_with_a_long_name_%d.go", i, i))
	}
	events = append(events, ckpt.MustEvent(ckpt.EventUpdate, at, ckpt.Actor{}, ckpt.Patch{FilesModified: files}))
	for _, e := range events {
		if _, err := st.Append(t.Context(), "big", e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := hookRun(t, bin, dir, "SessionStart", `{"session_id":"s2","hook_event_name":"SessionStart","source":"compact"}`, "CKPT_ID=big")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if n := len(utf16.Encode([]rune(out))); n >= 10000 || !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("output is %d UTF-16 units, want one line under 10,000: %.200q", n, out)
	}
	var v struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.HookSpecificOutput.HookEventName != "SessionStart" ||
		!strings.Contains(v.HookSpecificOutput.AdditionalContext, "# Resume: A very large task") {
		t.Fatalf("output %v: %.300q", err, out)
	}
}

// BenchmarkHookSessionEnd runs `ckpt hook SessionEnd` as Claude Code does:
// a new process reading the payload, finding the store, appending the
// session note, beating and writing .ccc-progress.md. Claude Code gives all
// SessionEnd hooks 1.5 s together. Run it with
//
//	go test -run '^$' -bench HookSessionEnd -benchtime 100x ./cmd/ckpt
func BenchmarkHookSessionEnd(b *testing.B) {
	bin := ckptBinary(b)
	dir := hookProject(b, bin)
	i := 0
	timeLoop(b, "hook-session-end", func() error {
		i++
		// A new session each time, so every call appends its note.
		payload := fmt.Sprintf(`{"session_id":"bench-%d","transcript_path":"/tmp/t.jsonl","cwd":%q,"hook_event_name":"SessionEnd","reason":"other"}`, i, dir)
		code, out, errOut := hookRun(b, bin, dir, "SessionEnd", payload, "CKPT_ID=job")
		if code != 0 || out != "" || errOut != "" {
			return fmt.Errorf("ckpt hook SessionEnd: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		return nil
	})
}
