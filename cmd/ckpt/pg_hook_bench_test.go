package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/pgtest"
)

// pgHookCluster is BenchmarkHookOverPostgreSQL's own cluster.
var pgHookCluster pgtest.Cluster

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
	pgHookCluster.Need(b)
	b.Cleanup(func() { pgHookCluster.Close() })
	bin := ckptBinary(b)
	dir := b.TempDir()
	project := filepath.Join(dir, "app")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	local := filepath.Join(dir, ".ckpt")
	url := pgHookCluster.URL(pgHookCluster.NewDatabase(b))
	if _, err := ckptRun(b, bin, "--store", local, "init"); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=kai", "CKPT_KEEPER=off", "XDG_STATE_HOME=" + filepath.Join(dir, "state")}
	prompt := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"UserPromptSubmit","prompt":"Refactor parseConfig"}`, project)
	pre := fmt.Sprintf(`{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_use_id":"toolu_01"}`, project)
	hook := func(store string, env []string, event, stdin string) *exec.Cmd {
		cmd := exec.Command(bin, "--store", store, "hook", event)
		cmd.Dir, cmd.Env, cmd.Stdin = project, env, strings.NewReader(stdin)
		return cmd
	}
	for _, store := range []string{local, url} {
		cmd := hook(store, env, "UserPromptSubmit", prompt)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) == 0 {
			b.Fatalf("the first prompt's hook: %v: %s", err, out)
		}
	}
	keeperEnv, keeperPID := benchKeeper(b, bin, url, env, "beat", "app/session-s1")
	preToolUse := func(store string, env []string) func() *exec.Cmd {
		return func() *exec.Cmd { return hook(store, env, "PreToolUse", pre) }
	}
	cases := []procCase{
		{name: "local", cmd: preToolUse(local, env), quiet: true},
		{name: "pg", cmd: preToolUse(url, env), pg: true, quiet: true},
		{name: "pg-keeper", cmd: preToolUse(url, keeperEnv), pg: true, quiet: true,
			sideCPU: func() time.Duration { return processCPU(b, keeperPID) }, sideMetric: "pg-keeper-keeper-cpu-µs"},
	}
	runProcCases(b, &pgHookCluster, cases).report(b, cases, 0)
}
