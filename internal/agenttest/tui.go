package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TUI is an interactive client running under a pseudo-terminal (util-linux
// script(1)), for what only the interactive client does: Claude Code's
// permission dialog and its Notification hook.
type TUI struct {
	s      *Session
	cmd    *exec.Cmd
	in     io.WriteCloser
	cancel context.CancelFunc
	// pidFile holds the client's PID, which is also its process group's.
	pidFile string
	mu      sync.Mutex
	screen  bytes.Buffer
}

// StartClaudeTUI starts Claude Code interactively with prompt as the first
// message, in default permission mode: a tool that needs permission opens
// the dialog. The throwaway HOME is marked onboarded, with the mock's API
// key approved and the project trusted, so no first-run screen shows. Stop
// it with Close (it is also killed when the test ends).
func (s *Session) StartClaudeTUI(prompt string) *TUI {
	s.T.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		SkipOrFail(s.T, "script(1) from util-linux is needed for a pseudo-terminal: apt-get install bsdutils")
	}
	key := claudeAPIKey
	cfg := map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 5,
		"customApiKeyResponses": map[string]any{"approved": []string{key[len(key)-20:]}, "rejected": []string{}},
		"projects": map[string]any{s.Project: map[string]any{
			"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true, "allowedTools": []string{}}},
	}
	data, err := json.Marshal(cfg)
	must(s.T, err)
	must(s.T, os.WriteFile(filepath.Join(s.Home, ".claude.json"), data, 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	// script(1) starts the command in a new session on the pseudo-terminal,
	// out of cmd's process group: the shell notes its PID (the client's,
	// after exec, and its new process group's) so Close can end it.
	t0 := &TUI{pidFile: filepath.Join(s.Root, "tui.pid")}
	line := "echo $$ > " + shellQuote(t0.pidFile) + "; exec " + shellQuote(s.Bin) + " " + shellQuote(prompt)
	cmd := exec.CommandContext(ctx, "script", "-qfec", line, "/dev/null")
	cmd.Dir = s.Project
	cmd.Env = append(s.Environ(), "TERM=xterm-256color", "COLUMNS=120", "LINES=40")
	setProcessGroup(cmd)
	t := t0
	t.s, t.cmd, t.cancel = s, cmd, cancel
	in, err := cmd.StdinPipe()
	must(s.T, err)
	t.in = in
	cmd.Stdout = (*lockedWriter)(t)
	cmd.Stderr = (*lockedWriter)(t)
	if err := cmd.Start(); err != nil {
		cancel()
		s.T.Fatalf("starting claude under script(1): %v", err)
	}
	s.T.Cleanup(t.Close)
	return t
}

// Type sends keys to the client: "\r" is Enter.
func (t *TUI) Type(keys string) {
	t.s.T.Helper()
	if _, err := io.WriteString(t.in, keys); err != nil {
		t.s.T.Fatalf("typing into the client: %v", err)
	}
}

// Screen is everything the client drew so far (with its escape codes).
func (t *TUI) Screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.screen.String()
}

// Mark is how much the client has drawn so far, for WaitForText.
func (t *TUI) Mark() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.screen.Len()
}

// escapes are the terminal's control sequences (CSI, OSC, charset).
var escapes = regexp.MustCompile(`\x1b(\[[0-9;?<=>]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z])`)

// WaitForText waits until the client has drawn text after mark (a Mark),
// failing the test after timeout. The screen is compared without its
// control sequences and white space, since the client moves the cursor
// between words instead of printing spaces. A hook fires while the client
// is still drawing: keys typed before what takes them is on screen can be
// lost, so a test waits for it.
func (t *TUI) WaitForText(mark int, text string, timeout time.Duration) {
	t.s.T.Helper()
	want := strings.Join(strings.Fields(text), "")
	for deadline := time.Now().Add(timeout); ; time.Sleep(50 * time.Millisecond) {
		t.mu.Lock()
		drawn := t.screen.String()[mark:]
		t.mu.Unlock()
		plain := strings.Join(strings.Fields(escapes.ReplaceAllString(drawn, "")), "")
		if strings.Contains(plain, want) {
			return
		}
		if time.Now().After(deadline) {
			t.s.T.Fatalf("the client did not draw %q in %s; it drew:\n%s", text, timeout, plain)
		}
	}
}

// Close kills the client with its hooks and script(1), and waits until
// they are gone, so nothing writes into the test's directories after it.
func (t *TUI) Close() {
	if data, err := os.ReadFile(t.pidFile); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
			killGroupAndWait(pid, RunTimeout)
		}
	}
	KillGroup(t.cmd)
	_ = t.in.Close()
	_ = t.cmd.Wait()
	t.cancel()
}

type lockedWriter TUI

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.screen.Write(p)
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// SkipOrFail fails the test when CI=true and skips it otherwise: for a tool the
// machine lacks.
func SkipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
