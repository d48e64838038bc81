package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkHookOverPostgreSQL measures a whole `ckpt hook PreToolUse`
// process (Claude Code's payload on stdin: a presence beat) on a local
// store, then on PostgreSQL directly (CKPT_KEEPER=off: ckpt hands the hook
// to ckpt-pg, which connects) and through the keeper, each iteration
// running every case once in turn. It reports each case's median wall
// time (NAME-ms), the pg cases' ratios to the local hook in wall and
// client CPU (NAME-vs-local-x, NAME-vs-local-cpu-x), the server's CPU per
// hook, the keeper's, and a local hook's (local-cpu-µs).
//
//	go test -run '^$' -bench HookOverPostgreSQL -benchtime 40x ./cmd/ckpt
func BenchmarkHookOverPostgreSQL(b *testing.B) {
	cluster := benchCluster(b)
	bin := ckptBinary(b)
	h := newHookSession(b, bin)
	url := cluster.URL(cluster.NewDatabase(b))
	env := h.env
	for _, store := range []string{h.local, url} {
		h.start(b, store, env)
	}
	keeperEnv, keeperPID := benchKeeper(b, bin, url, env, "beat", "app/session-s1")
	cases := []procCase{
		{name: "local", cmd: h.preToolUse(h.local, env), quiet: true},
		{name: "pg", cmd: h.preToolUse(url, env), pg: true, quiet: true},
		{name: "pg-keeper", cmd: h.preToolUse(url, keeperEnv), pg: true, quiet: true,
			sideCPU: func() time.Duration { return processCPU(b, keeperPID) }, sideMetric: "pg-keeper-keeper-cpu-µs"},
	}
	runProcCases(b, cluster, cases).report(b, cases, 0)
}

// hookSession is a Claude Code session for the hook benchmarks: a git
// project, a local store beside it, the environment its hooks run in
// (no keeper unless a case adds one) and the payloads of its first prompt
// and of a PreToolUse.
type hookSession struct {
	bin, dir, project, local string
	env                      []string
	prompt, pre              string
}

// newHookSession makes the project and the local store in a new directory.
func newHookSession(b *testing.B, bin string) *hookSession {
	b.Helper()
	dir := b.TempDir()
	h := &hookSession{bin: bin, dir: dir, project: filepath.Join(dir, "app"), local: filepath.Join(dir, ".ckpt")}
	if err := os.MkdirAll(filepath.Join(h.project, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := ckptRun(b, bin, "--store", h.local, "init"); err != nil {
		b.Fatal(err)
	}
	h.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=kai", "CKPT_KEEPER=off", "XDG_STATE_HOME=" + filepath.Join(dir, "state")}
	h.prompt = fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"Refactor parseConfig"}`, h.project)
	h.pre = fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_01"}`, h.project)
	return h
}

// hook is `ckpt --store STORE hook EVENT` in the project, stdin given.
func (h *hookSession) hook(store string, env []string, event, stdin string) *exec.Cmd {
	cmd := exec.Command(h.bin, "--store", store, "hook", event)
	cmd.Dir, cmd.Env, cmd.Stdin = h.project, env, strings.NewReader(stdin)
	return cmd
}

// start sends the session's first prompt to store: its checkpoint exists
// from then on.
func (h *hookSession) start(b *testing.B, store string, env []string) {
	b.Helper()
	if out, err := h.hook(store, env, "UserPromptSubmit", h.prompt).CombinedOutput(); err != nil || len(out) == 0 {
		b.Fatalf("the first prompt's hook: %v: %s", err, out)
	}
}

// preToolUse makes the PreToolUse hook's process on store.
func (h *hookSession) preToolUse(store string, env []string) func() *exec.Cmd {
	return func() *exec.Cmd { return h.hook(store, env, "PreToolUse", h.pre) }
}
