package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/render"
)

// The corpus of recorded hook sequences (internal/claude/testdata/traces,
// format in its README) is replayed through the real binary, `ckpt hook
// EVENT`, as the client would run it with ckpt's hooks installed; then a
// new session tied to the checkpoint by CKPT_ID starts, and its
// SessionStart context, like `ckpt resume`, must contain every fact in the
// trace's <name>.facts file, within the budget.
//
// A .facts file has one fact a line, which the prompt must contain ("\n"
// stands for a line break); a line starting with "!" is text it must not
// contain; "@env K=V" sets a variable for every hook of the replay,
// "@checkpoint ID" names the checkpoint when the store has several,
// "@budget N" checks `ckpt resume --budget N` (default 2000); "//" starts
// a comment. A trace without a .facts file (recorded since) is checked
// for its first prompt as the goal only. A hand-written trace may bring files: <name>.files/ is copied
// into the replay's root (a transcript under home/.claude, say).

const tracesDir = "../../internal/claude/testdata/traces"

// traceLine is one hook invocation of a trace.
type traceLine struct {
	Client   string          `json:"client"`
	Version  string          `json:"version"`
	Event    string          `json:"event"`
	OffsetMS int64           `json:"offset_ms"`
	Real     bool            `json:"real"`
	Payload  json.RawMessage `json:"payload"`
}

type traceFacts struct {
	want, absent []string
	env          []string
	checkpoint   string
	budget       int
}

func readFacts(t *testing.T, path string, lines []traceLine) traceFacts {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		// A trace recorded since its facts were written: at least its
		// first prompt must be the goal.
		t.Logf("%s is missing: checking only that the first prompt is the goal", filepath.Base(path))
		data = []byte("# Resume: " + firstPrompt(lines))
	} else if err != nil {
		t.Fatal(err)
	}
	f := traceFacts{budget: render.DefaultBudget}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		l = strings.ReplaceAll(l, `\n`, "\n")
		switch {
		case l == "" || strings.HasPrefix(l, "//"):
		case strings.HasPrefix(l, "@env "):
			f.env = append(f.env, strings.TrimSpace(l[5:]))
		case strings.HasPrefix(l, "@checkpoint "):
			f.checkpoint = strings.TrimSpace(l[12:])
		case strings.HasPrefix(l, "@budget "):
			n, err := strconv.Atoi(strings.TrimSpace(l[8:]))
			if err != nil {
				t.Fatalf("%s: %q", path, l)
			}
			f.budget = n
		case strings.HasPrefix(l, "!"):
			f.absent = append(f.absent, l[1:])
		default:
			f.want = append(f.want, l)
		}
	}
	if len(f.want) == 0 {
		t.Fatalf("%s: no facts", path)
	}
	return f
}

var recordedRoot = regexp.MustCompile("Temporary root of the recording \\(rewrite it in replays\\): `([^`]+)`")

func TestHookTracesCarryTheirFacts(t *testing.T) {
	traces, _ := filepath.Glob(filepath.Join(tracesDir, "*.jsonl"))
	facts, _ := filepath.Glob(filepath.Join(tracesDir, "*.facts"))
	if len(traces) < 12 || len(facts) < 12 {
		t.Fatalf("%d traces and %d facts files in %s, want at least 12 of each", len(traces), len(facts), tracesDir)
	}
	bin := ckptBinary(t)
	for _, path := range traces {
		name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			replayTrace(t, bin, name)
		})
	}
}

func replayTrace(t *testing.T, bin, name string) {
	base := filepath.Join(tracesDir, name)
	lines := readTrace(t, base+".jsonl")
	facts := readFacts(t, base+".facts", lines)
	note, err := os.ReadFile(base + ".md")
	if err != nil {
		t.Fatalf("every trace needs its note: %v", err)
	}
	m := recordedRoot.FindSubmatch(note)
	if m == nil {
		t.Fatalf("%s.md does not name the recording's temporary root", name)
	}
	oldRoot := string(m[1])
	root := t.TempDir()
	rewrite := strings.NewReplacer(oldRoot, root,
		strings.ReplaceAll(oldRoot, "/", "-"), strings.ReplaceAll(root, "/", "-"))
	proj, home := filepath.Join(root, "proj"), filepath.Join(root, "home")
	newProject(t, bin, proj, home)
	if fi, err := os.Stat(base + ".files"); err == nil && fi.IsDir() {
		copyTree(t, base+".files", root, rewrite)
	}

	client := lines[0].Client
	matchers := installedMatchers(t, bin, client)
	env := append([]string{"HOME=" + home, "CKPT_STATE_DIR=" + filepath.Join(root, "state")}, facts.env...)
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ran := 0
	for i, l := range lines {
		payload := rewrite.Replace(string(l.Payload))
		if !matchers.match(l.Event, payload) {
			continue
		}
		now := t0.Add(time.Duration(l.OffsetMS) * time.Millisecond).Format(time.RFC3339Nano)
		code, _, stderr := runHook(t, bin, proj, client, l.Event, payload, append(env, "CKPT_NOW="+now)...)
		if code != 0 || strings.Contains(stderr, "internal error") {
			t.Fatalf("line %d %s: exit %d, stderr %s", i+1, l.Event, code, stderr)
		}
		if stderr != "" {
			t.Logf("line %d %s: %s", i+1, l.Event, strings.TrimSpace(stderr))
		}
		ran++
	}
	id := facts.checkpoint
	if id == "" {
		id = onlyCheckpoint(t, bin, proj)
	}

	// ckpt resume prints the prompt within its budget (first: a new
	// session's start replaces what the last one was last seen doing).
	resume := exec.Command(bin, "resume", id, "--budget", strconv.Itoa(facts.budget), "--for", map[string]string{"codex": "codex", "gemini": "gemini"}[client]+map[bool]string{true: "claude"}[client == "claude-code"])
	resume.Dir = proj
	resume.Env = append([]string{"PATH=" + os.Getenv("PATH"), "CKPT_NOW=" + t0.Add(24*time.Hour).Format(time.RFC3339)}, env...)
	prompt, err := resume.Output()
	if err != nil {
		t.Fatalf("ckpt resume %s: %v", id, err)
	}
	body, _, _ := strings.Cut(string(prompt), "\n---\n\nContinue in ")
	checkFacts(t, "ckpt resume", body, facts)
	if n := render.EstimateTokens(body); n > facts.budget {
		t.Errorf("ckpt resume --budget %d printed %d tokens", facts.budget, n)
	}
	// A new session tied to the checkpoint by CKPT_ID gets the prompt at
	// its start.
	start, _ := json.Marshal(map[string]string{"session_id": "replay-next", "cwd": proj, "hook_event_name": "SessionStart", "source": "startup"})
	_, out, stderr := runHook(t, bin, proj, client, "SessionStart", string(start), append(env, "CKPT_ID="+id)...)
	var reply struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &reply); err != nil || reply.HookSpecificOutput.AdditionalContext == "" {
		t.Fatalf("the new session's SessionStart: %q (%v), stderr %s", out, err, stderr)
	}
	context := reply.HookSpecificOutput.AdditionalContext
	checkFacts(t, "SessionStart context", context, facts)
	if n := render.EstimateTokens(context); n > render.DefaultBudget+100 {
		t.Errorf("SessionStart context is %d tokens, over the default budget %d (and its first line)", n, render.DefaultBudget)
	}

	t.Logf("%d of %d hooks ran (the rest match no installed matcher); ckpt resume --budget %d: %d tokens; the new session's context (%d tokens):\n%s",
		ran, len(lines), facts.budget, render.EstimateTokens(body), render.EstimateTokens(context), context)
}

// firstPrompt is the first line of the trace's first prompt.
func firstPrompt(lines []traceLine) string {
	for _, l := range lines {
		var p struct {
			Prompt string `json:"prompt"`
		}
		if json.Unmarshal(l.Payload, &p) == nil && strings.TrimSpace(p.Prompt) != "" && (l.Event == "UserPromptSubmit" || l.Event == "BeforeAgent") {
			first, _, _ := strings.Cut(strings.TrimSpace(p.Prompt), "\n")
			return strings.TrimSpace(first)
		}
	}
	return ""
}

func checkFacts(t *testing.T, what, prompt string, f traceFacts) {
	t.Helper()
	for _, w := range f.want {
		if !strings.Contains(prompt, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, prompt)
		}
	}
	for _, a := range f.absent {
		if strings.Contains(prompt, a) {
			t.Errorf("%s contains %q, which it must not:\n%s", what, a, prompt)
		}
	}
}

func readTrace(t *testing.T, path string) []traceLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []traceLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l traceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: line %d: %v", path, len(out)+1, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("%s: %v, %d lines", path, err, len(out))
	}
	return out
}

// newProject makes the project the session worked in: a git repository
// with one commit and a ckpt store.
func newProject(t *testing.T, bin, proj, home string) {
	t.Helper()
	for _, d := range []string{proj, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("# proj\n"), 0o644)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "README.md"}, {"commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = proj
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if _, err := ckptRun(t, bin, "--store", filepath.Join(proj, ".ckpt"), "init"); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files under src into dst, rewriting the recorded
// root in their text.
func copyTree(t *testing.T, src, dst string, rewrite *strings.Replacer) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rewrite.Replace(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, []byte(rewrite.Replace(string(data))), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func runHook(t *testing.T, bin, dir, client, event, payload string, env ...string) (int, string, string) {
	t.Helper()
	args := []string{"hook", event}
	if c := clientFlag(client); c != "" {
		args = append(args, "--client", c)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running ckpt hook %s: %v", event, err)
	}
	return code, out.String(), errOut.String()
}

func clientFlag(client string) string {
	return map[string]string{"codex": "codex", "gemini": "gemini"}[client]
}

func onlyCheckpoint(t *testing.T, bin, proj string) string {
	t.Helper()
	out, err := ckptRun(t, bin, "--store", filepath.Join(proj, ".ckpt"), "ls", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("want one checkpoint after the replay (else name it with @checkpoint): %s (%v)", out, err)
	}
	return list[0].ID
}

// matcherSet is what `ckpt hooks install CLIENT` registers: per event,
// the matchers of ckpt's entries ("" matches everything).
type matcherSet map[string][]*regexp.Regexp

var (
	matchersMu    sync.Mutex
	matchersCache = map[string]matcherSet{}
)

// installedMatchers reads the matchers from `ckpt hooks install CLIENT
// --print`: the replay runs only the hooks a real install would.
func installedMatchers(t *testing.T, bin, client string) matcherSet {
	t.Helper()
	matchersMu.Lock()
	defer matchersMu.Unlock()
	if m, ok := matchersCache[client]; ok {
		return m
	}
	arg := map[string]string{"claude-code": "claude", "codex": "codex", "gemini": "gemini"}[client]
	cmd := exec.Command(bin, "hooks", "install", arg, "--print", "--command", "ckpt")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ckpt hooks install %s --print: %v", arg, err)
	}
	var file struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(out, &file); err != nil {
		t.Fatalf("ckpt hooks install %s --print: %v\n%s", arg, err, out)
	}
	m := matcherSet{}
	for ev, groups := range file.Hooks {
		for _, g := range groups {
			m[ev] = append(m[ev], regexp.MustCompile("^(?:"+g.Matcher+")$"))
		}
	}
	matchersCache[client] = m
	return m
}

// match reports whether an installed hook fires for event with payload:
// tool events match the tool's name, SessionStart its source,
// Notification its type, the rest fire always.
func (m matcherSet) match(event, payload string) bool {
	res, ok := m[event]
	if !ok {
		return false
	}
	var p struct {
		ToolName         string `json:"tool_name"`
		Source           string `json:"source"`
		NotificationType string `json:"notification_type"`
	}
	json.Unmarshal([]byte(payload), &p)
	subject := ""
	switch {
	case strings.Contains(event, "Tool"):
		subject = p.ToolName
	case event == "SessionStart":
		subject = p.Source
	case event == "Notification":
		subject = p.NotificationType
	}
	for _, re := range res {
		if re.String() == "^(?:)$" || re.MatchString(subject) {
			return true
		}
	}
	return false
}
