package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	hook := func(store string, env []string, event, stdin string) (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(bin, "--store", store, "hook", event)
		cmd.Dir, cmd.Env, cmd.Stdin = project, env, strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd, &out
	}
	for _, store := range []string{local, url} {
		if cmd, out := hook(store, env, "UserPromptSubmit", prompt); cmd.Run() != nil || out.Len() == 0 {
			b.Fatalf("the first prompt's hook: %s", out)
		}
	}
	keeperEnv, keeperPID := benchKeeper(b, bin, url, env, "beat", "app/session-s1")
	cases := []struct {
		name, store string
		env         []string
	}{{"local", local, env}, {"pg", url, env}, {"pg-keeper", url, keeperEnv}}
	wall := make([][]time.Duration, len(cases))
	cpu := make([][]time.Duration, len(cases))
	serverCPU := make([]time.Duration, len(cases))
	var keeperCPU time.Duration
	runs := 0
	for b.Loop() {
		for k := range cases {
			c := (k + runs) % len(cases) // each case first in turn
			cmd, out := hook(cases[c].store, cases[c].env, "PreToolUse", pre)
			server0, keeper0 := clusterCPU(b, &pgHookCluster), processCPU(b, keeperPID)
			t := time.Now()
			if err := cmd.Run(); err != nil || out.Len() > 0 {
				b.Fatalf("%s: hook PreToolUse: %v: %s", cases[c].name, err, out)
			}
			wall[c] = append(wall[c], time.Since(t))
			cpu[c] = append(cpu[c], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			serverCPU[c] += clusterCPU(b, &pgHookCluster) - server0
			if cases[c].name == "pg-keeper" {
				keeperCPU += processCPU(b, keeperPID) - keeper0
			}
		}
		runs++
	}
	med := func(ts []time.Duration) time.Duration { return median(slices.Clone(ts)) }
	for k, c := range cases {
		b.ReportMetric(float64(med(wall[k]).Microseconds())/1000, c.name+"-ms")
		if k > 0 && runs > 0 {
			b.ReportMetric(float64(med(wall[k]))/float64(med(wall[0])), c.name+"-vs-local-x")
			b.ReportMetric(float64(med(cpu[k]))/float64(med(cpu[0])), c.name+"-vs-local-cpu-x")
			b.ReportMetric(float64((serverCPU[k] / time.Duration(runs)).Microseconds()), c.name+"-server-cpu-µs")
		}
	}
	if runs > 0 {
		b.ReportMetric(float64((keeperCPU / time.Duration(runs)).Microseconds()), "pg-keeper-keeper-cpu-µs")
		b.ReportMetric(float64(med(cpu[0]).Microseconds()), "local-cpu-µs")
	}
}

// clusterCPU is c's processor time so far (pgtest.Cluster.CPU).
func clusterCPU(b *testing.B, c *pgtest.Cluster) time.Duration {
	t, err := c.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return t
}
