package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// RunTimeout bounds one client run: a client that hangs (waiting on a
// prompt nobody answers) fails the test instead of holding CI.
const RunTimeout = 3 * time.Minute

// Session is one client's throwaway world: a HOME, a git project with a
// ckpt store and ckpt's hooks installed, and the environment that points
// the client at the mock.
type Session struct {
	T       testing.TB
	Client  Client
	Bin     string // the client's command
	Root    string // the temporary directory everything lives in
	Home    string
	Project string
	Store   string // the project's .ckpt store
	Ckpt    string // the ckpt command: this tree's, see Main
	Record  string // where the recording hook writes, "" when not recording
	Server  *Server
	// Env is added to the environment of every run (and so of the hooks):
	// CKPT_ID, CLAUDE_CODE_MAX_RETRIES…
	Env []string
}

// Options changes how NewSession prepares a session.
type Options struct {
	// Record installs, beside ckpt's hooks, a hook on every event ckpt
	// registers (with no matcher, so every tool) that saves its stdin: see
	// Recording.
	Record bool
	// Files are written into the project before its first commit, by
	// slash-separated relative path.
	Files map[string]string
}

// NewSession prepares a session of client c against srv: the client's
// command (skipping or failing the test when it is missing), a HOME with
// the client's settings, a git project with a ckpt store and ckpt's hooks
// installed (ckpt hooks install, project scope, running the ckpt built
// from this tree).
func NewSession(t testing.TB, c Client, srv *Server, opt Options) *Session {
	t.Helper()
	bin := Need(t, c)
	root := t.TempDir()
	s := &Session{T: t, Client: c, Bin: bin, Root: root, Server: srv,
		Home: filepath.Join(root, "home"), Project: filepath.Join(root, "proj"), Ckpt: CkptBinary(t)}
	s.Store = filepath.Join(s.Project, ".ckpt")
	for _, d := range []string{s.Home, s.Project, filepath.Join(root, "tmp"), filepath.Join(root, "state")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	files := map[string]string{"README.md": "# proj\n"}
	for k, v := range opt.Files {
		files[k] = v
	}
	for name, body := range files {
		p := filepath.Join(s.Project, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	s.git("init", "-q", "-b", "main")
	s.git("add", "-A")
	s.git("commit", "-q", "-m", "start")
	s.MustCkpt("init")
	s.MustCkpt("hooks", "install", hookClient(c), "--command", s.Ckpt)
	switch c {
	case Codex:
		s.writeCodexConfig()
	case Gemini:
		s.writeFile(filepath.Join(s.Home, ".gemini", "settings.json"),
			`{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"disableAutoUpdate":true,"disableUpdateNag":true},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`)
	}
	if opt.Record {
		s.installRecorder()
	}
	return s
}

// hookClient is the client's name for ckpt hooks install.
func hookClient(c Client) string {
	switch c {
	case Codex:
		return "codex"
	case Gemini:
		return "gemini"
	}
	return "claude"
}

// SettingsFile is the project's file that holds the client's hooks.
func (s *Session) SettingsFile() string {
	switch s.Client {
	case Codex:
		return filepath.Join(s.Project, ".codex", "hooks.json")
	case Gemini:
		return filepath.Join(s.Project, ".gemini", "settings.json")
	}
	return filepath.Join(s.Project, ".claude", "settings.json")
}

func (s *Session) writeCodexConfig() {
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, s.Server.URL, s.Project)
	s.writeFile(filepath.Join(s.Home, ".codex", "config.toml"), cfg)
}

func (s *Session) writeFile(path, body string) {
	must(s.T, os.MkdirAll(filepath.Dir(path), 0o755))
	must(s.T, os.WriteFile(path, []byte(body), 0o644))
}

// Environ is the environment a client run gets: a PATH with the client's
// node and ckpt, the throwaway HOME, the store, the mock's URL and keys,
// the clients' switches for offline use, then s.Env.
func (s *Session) Environ() []string {
	env := []string{
		"PATH=" + filepath.Dir(s.Ckpt) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + s.Home,
		"USER=tester",
		"TMPDIR=" + filepath.Join(s.Root, "tmp"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(s.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(s.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(s.Home, ".local", "state"),
		"CKPT_STORE=" + s.Store,
		"CKPT_STATE_DIR=" + filepath.Join(s.Root, "state"),
		"GIT_CONFIG_NOSYSTEM=1",
		// ckpt is the test binary (Main): under -race it would sleep a
		// second at every exit, in every hook.
		"GORACE=atexit_sleep_ms=0",
	}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOROOT"} {
		if v := goEnv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	switch s.Client {
	case ClaudeCode:
		env = append(env,
			"ANTHROPIC_BASE_URL="+s.Server.URL,
			"ANTHROPIC_API_KEY="+claudeAPIKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
			"IS_SANDBOX=1")
	case Codex:
		env = append(env, "CODEX_HOME="+filepath.Join(s.Home, ".codex"), "MOCK_API_KEY=mock-key")
	case Gemini:
		env = append(env,
			"GEMINI_API_KEY=mock-key", "GOOGLE_GEMINI_BASE_URL="+s.Server.URL,
			"GEMINI_CLI_TRUST_WORKSPACE=true", "GEMINI_CLI_NO_RELAUNCH=true")
	}
	return append(env, s.Env...)
}

// Command is the client's command with args, in the project, with
// Environ, killed (with its process group) when ctx ends.
func (s *Session) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.Bin, args...)
	cmd.Dir = s.Project
	cmd.Env = s.Environ()
	setProcessGroup(cmd)
	return cmd
}

// Run runs the client with args to its end and returns its stdout; stderr
// goes to the test log when the run fails. A run past RunTimeout is
// killed and fails the test.
func (s *Session) Run(args ...string) (string, error) {
	s.T.Helper()
	return s.Start(args...).Wait()
}

// Running is a client run in progress (Start).
type Running struct {
	s         *Session
	args      []string
	cmd       *exec.Cmd
	ctx       context.Context
	cancel    context.CancelFunc
	out, errb bytes.Buffer
	done      bool
}

// Start starts the client with args and returns without waiting; Wait
// ends it. The client (its whole process group) is killed when the test
// ends, or after RunTimeout.
func (s *Session) Start(args ...string) *Running {
	s.T.Helper()
	r := &Running{s: s, args: args}
	r.ctx, r.cancel = context.WithTimeout(context.Background(), RunTimeout)
	r.cmd = s.Command(r.ctx, args...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.errb
	if err := r.cmd.Start(); err != nil {
		r.cancel()
		s.T.Fatalf("starting %s: %v", s.Client.Bin, err)
	}
	s.T.Cleanup(func() {
		// The client, then the hooks it left running, before the test's
		// directories go.
		KillGroup(r.cmd)
		_, _ = r.wait()
		killGroupAndWait(r.cmd.Process.Pid, 10*time.Second)
	})
	return r
}

// Pid is the client's process ID.
func (r *Running) Pid() int { return r.cmd.Process.Pid }

// Kill sends SIGKILL to the client process alone (kill -9): its hooks and
// tools are left running, as after a crash.
func (r *Running) Kill() { _ = r.cmd.Process.Kill() }

// Wait waits for the client to exit and returns its stdout; a run past
// RunTimeout fails the test.
func (r *Running) Wait() (string, error) {
	s := r.s
	s.T.Helper()
	r.done = true
	err := r.cmd.Wait()
	r.cancel()
	if r.ctx.Err() == context.DeadlineExceeded {
		s.T.Fatalf("%s %s: still running after %s\nstdout:\n%s\nstderr:\n%s", s.Client.Bin, strings.Join(r.args, " "),
			RunTimeout, tail(r.out.String()), tail(r.errb.String()))
	}
	if err != nil {
		s.T.Logf("%s %s: %v\nstderr:\n%s", s.Client.Bin, strings.Join(r.args, " "), err, tail(r.errb.String()))
	}
	return r.out.String(), err
}

// WaitHooks waits, after Wait, until every process the client left behind
// in its process group is gone: the hooks it started and did not wait for
// (SessionEnd, StopFailure) have finished. It fails the test after
// RunTimeout.
func (r *Running) WaitHooks() {
	r.s.T.Helper()
	deadline := time.Now().Add(RunTimeout)
	for groupAlive(r.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			r.s.T.Fatalf("the hooks of %s still run after %s", r.s.Client.Bin, RunTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// wait is Wait for cleanup, once.
func (r *Running) wait() (string, error) {
	if r.done {
		return "", nil
	}
	r.done = true
	err := r.cmd.Wait()
	r.cancel()
	return r.out.String(), err
}

// MustRun is Run that fails the test when the client exits non-zero.
func (s *Session) MustRun(args ...string) string {
	s.T.Helper()
	out, err := s.Run(args...)
	if err != nil {
		s.T.Fatalf("%s %s: %v\nstdout:\n%s", s.Client.Bin, strings.Join(args, " "), err, tail(out))
	}
	return out
}

// RunCkpt runs the ckpt under test in the project with the session's
// environment and returns its stdout and error.
func (s *Session) RunCkpt(args ...string) (string, error) {
	cmd := exec.Command(s.Ckpt, args...)
	cmd.Dir = s.Project
	cmd.Env = s.Environ()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("ckpt %s: %w: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), err
}

// MustCkpt is RunCkpt that fails the test on an error.
func (s *Session) MustCkpt(args ...string) string {
	s.T.Helper()
	out, err := s.RunCkpt(args...)
	if err != nil {
		s.T.Fatal(err)
	}
	return out
}

// ShowJSON is `ckpt show ID --json`, decoded.
func (s *Session) ShowJSON(id string) map[string]any {
	s.T.Helper()
	out := s.MustCkpt("show", id, "--json")
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		s.T.Fatalf("ckpt show %s --json: %v\n%s", id, err, out)
	}
	return v
}

// Checkpoints lists the store's checkpoint IDs (ckpt ls --json).
func (s *Session) Checkpoints() []string {
	s.T.Helper()
	out := s.MustCkpt("ls", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		var wrapped map[string][]map[string]any
		if err2 := json.Unmarshal([]byte(out), &wrapped); err2 != nil {
			s.T.Fatalf("ckpt ls --json: %v\n%s", err, out)
		}
		for _, v := range wrapped {
			list = append(list, v...)
		}
	}
	var ids []string
	for _, c := range list {
		if id, ok := c["id"].(string); ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (s *Session) git(args ...string) {
	s.T.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = s.Project
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+s.Home)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var (
	linkOnce sync.Once
	linkPath string
	linkErr  error
	goEnvs   sync.Map
)

// Main is TestMain for a package whose tests use Session: started as
// "ckpt" (the hooks the clients run) the test binary is the ckpt command,
// built from this tree with the tests; otherwise it runs the tests. So the
// hooks run the code under test, and go test's cache knows it.
func Main(m *testing.M) {
	if filepath.Base(os.Args[0]) == "ckpt" {
		// As cmd/ckpt assembles it: every verb, the stores ckpt opens.
		os.Exit(cli.Main(cmdutil.System(), cli.Program{Verbs: cli.Verbs(), Stores: cli.Stores()}))
	}
	code := m.Run()
	if linkPath != "" {
		_ = os.RemoveAll(filepath.Dir(linkPath))
	}
	os.Exit(code)
}

// CkptBinary returns the path of the ckpt command the hooks run: a link
// named ckpt to the test binary itself (see Main), made once per test
// binary.
func CkptBinary(t testing.TB) string {
	t.Helper()
	linkOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			linkErr = err
			return
		}
		dir, err := os.MkdirTemp("", "agenttest-ckpt-")
		if err != nil {
			linkErr = err
			return
		}
		linkPath = filepath.Join(dir, "ckpt")
		linkErr = os.Symlink(self, linkPath)
	})
	if linkErr != nil {
		t.Fatalf("linking the test binary as ckpt: %v", linkErr)
	}
	return linkPath
}

// goEnv is `go env KEY`, cached: the clients' shell commands may run go.
func goEnv(key string) string {
	if v, ok := goEnvs.Load(key); ok {
		return v.(string)
	}
	out, _ := exec.Command("go", "env", key).Output()
	v := strings.TrimSpace(string(out))
	goEnvs.Store(key, v)
	return v
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// tail is the end of a long output, for logs.
func tail(s string) string {
	const max = 6000
	if len(s) > max {
		return "…" + s[len(s)-max:]
	}
	return s
}

// ClaudeArgs are the arguments of a headless Claude Code run of prompt
// (permissions skipped, stream-json with hook events on stdout), then
// extra (--session-id, --resume…).
func ClaudeArgs(prompt string, extra ...string) []string {
	args := []string{"-p", prompt, "--dangerously-skip-permissions", "--output-format", "stream-json",
		"--verbose", "--include-hook-events"}
	return append(args, extra...)
}

// CodexArgs are the arguments of a headless `codex exec` of prompt, hooks
// trusted and sandbox off; with resume it is `codex exec resume --last`.
func CodexArgs(prompt string, resume bool) []string {
	args := []string{"exec"}
	if resume {
		args = append(args, "resume", "--last")
	}
	return append(args, "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust",
		"--skip-git-repo-check", prompt)
}

// GeminiArgs are the arguments of a headless Gemini CLI run of prompt in
// yolo mode, then extra (--resume latest).
func GeminiArgs(prompt string, extra ...string) []string {
	return append([]string{"--yolo", "-p", prompt}, extra...)
}

// WaitForHook waits until the recording hook has seen event n times (at
// least), polling; it fails the test after d. Only for sessions made with
// Options.Record.
func (s *Session) WaitForHook(event string, n int, d time.Duration) {
	s.T.Helper()
	deadline := time.Now().Add(d)
	for {
		entries, _ := os.ReadDir(s.Record)
		seen := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), "."+event+".json") {
				seen++
			}
		}
		if seen >= n {
			return
		}
		if time.Now().After(deadline) {
			s.T.Fatalf("no %s hook after %s (saw %d)", event, d, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// claudeAPIKey is the key Claude Code sends the mock (any key works).
const claudeAPIKey = "sk-ant-api03-mock-key-for-tests-0000000000"
