package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// BenchmarkUpdateOverPostgreSQL measures a whole `ckpt update` process
// against a PostgreSQL store (CKPT_STORE=postgres://…, over the cluster's
// Unix socket) against the same command on a local store, in one run,
// each iteration running every case once in turn:
//
//   - hello: a hello-world Go binary, the floor of any process;
//   - local: ckpt update on a .ckpt/ store (durable: fsync);
//   - pg: ckpt update on PostgreSQL, as an agent runs it: ckpt hands the
//     command to ckpt-pg (exec), which connects, checks the schema, reads
//     and appends;
//   - pg-direct: the same run by ckpt-pg itself (no exec hop), which says
//     what the hop costs;
//   - pg-pooled: ckpt update through a PgBouncer in session mode in front
//     of the same database (when pgbouncer is installed): the server
//     connection outlives the process, so no backend starts for it;
//   - pg-keeper: ckpt update as an agent runs it by default, through this
//     user's keeper of the store (package keeper; started by the warm-up
//     update and kept running): ckpt sends the append over a Unix socket,
//     with no exec and no connection. (The other pg cases run with
//     CKPT_KEEPER=off.)
//
// It reports each case's median wall time (NAME-ms), each pg case's
// ratio to local in wall and CPU time (the client process's user+system;
// NAME-vs-local-x, NAME-vs-local-cpu-x), the database server's CPU per
// pg update (a connection is a backend process started for it) and the
// keeper's own CPU per update (pg-keeper-keeper-cpu-µs), which a client's
// figure leaves out, beside a local update's (local-cpu-µs).
//
//	go test -run '^$' -bench UpdateOverPostgreSQL -benchtime 100x ./cmd/ckpt
func BenchmarkUpdateOverPostgreSQL(b *testing.B) {
	cluster := benchCluster(b)
	hello := helloBinary(b)
	bin := ckptBinary(b)
	pg := filepath.Join(filepath.Dir(bin), "ckpt-pg")
	dir := b.TempDir()
	local := filepath.Join(dir, ".ckpt")
	url := cluster.URL(cluster.NewDatabase(b))
	if _, err := ckptRun(b, bin, "--store", local, "init"); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=kai", "CKPT_ID=kai-7/secondary-a", "CKPT_KEEPER=off"}
	for _, store := range []string{local, url} {
		start := exec.Command(bin, "--store", store, "start", "kai-7/secondary-a", "--step", "research", "--step", "spec")
		start.Env = env
		if out, err := start.CombinedOutput(); err != nil {
			b.Fatalf("ckpt start: %v: %s", err, out)
		}
	}
	keeperEnv, keeperPID := benchKeeper(b, bin, url, env, "beat", "kai-7/secondary-a")
	i := 0
	update := func(prog, store string, env []string) func() *exec.Cmd {
		return func() *exec.Cmd {
			i++
			cmd := exec.Command(prog, "--store", store, "update", "kai-7/secondary-a", "--stage", "S2.P2",
				"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")
			cmd.Dir, cmd.Env = dir, env
			return cmd
		}
	}
	cases := []procCase{
		{name: "hello", cmd: func() *exec.Cmd { c := exec.Command(hello); c.Dir, c.Env = dir, env; return c }},
		{name: "local", cmd: update(bin, local, env)},
		{name: "pg", cmd: update(bin, url, env), pg: true},
		{name: "pg-direct", cmd: update(pg, url, env), pg: true},
		{name: "pg-keeper", cmd: update(bin, url, keeperEnv), pg: true,
			sideCPU: func() time.Duration { return processCPU(b, keeperPID) }, sideMetric: "pg-keeper-keeper-cpu-µs"},
	}
	if pooled, poolerCPU := startPgBouncer(b, url); pooled != "" {
		cases = append(cases, procCase{name: "pg-pooled", cmd: update(bin, pooled, env), pg: true,
			sideCPU: poolerCPU, sideMetric: "pg-pooled-pgbouncer-cpu-µs"})
	} else {
		b.Log("pg-pooled left out: pgbouncer is not installed")
	}
	times := runProcCases(b, cluster, cases)
	times.report(b, cases, 1)
	if times.runs > 0 {
		b.ReportMetric(float64(median(slices.Clone(times.cpu[1])))/float64(median(slices.Clone(times.cpu[0]))), "local-vs-hello-cpu-x")
	}
}

// benchKeeper starts the keeper of the store at url for a pg-keeper
// case, as an agent's first command does (ckpt with args, a record
// command), in a keeper directory of its own, and returns that case's
// environment and the keeper's process ID; the keeper is killed when the
// benchmark ends.
func benchKeeper(b *testing.B, bin, url string, env []string, args ...string) ([]string, int) {
	runtime, err := os.MkdirTemp("", "kb") // short: a socket's path is limited
	if err != nil {
		b.Fatal(err)
	}
	kenv := append(slices.DeleteFunc(slices.Clone(env), func(v string) bool { return v == "CKPT_KEEPER=off" }),
		"XDG_RUNTIME_DIR="+runtime, "CKPT_KEEPER_IDLE=10m")
	paths := keeper.PathsFor(url, envOf(kenv)) // a server's keeper is also its token's
	warm := exec.Command(bin, append([]string{"--store", url}, args...)...)
	warm.Env = kenv
	if out, err := warm.CombinedOutput(); err != nil {
		b.Fatalf("ckpt %v: %v: %s", args, err, out)
	}
	for end := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		c, err := keeper.Dial(paths)
		if err == nil {
			s, err := c.Status()
			c.Close()
			if err == nil {
				b.Cleanup(func() {
					_ = syscall.Kill(s.PID, syscall.SIGKILL)
					os.RemoveAll(runtime)
				})
				return kenv, s.PID
			}
		}
		if time.Now().After(end) {
			b.Fatal("no keeper answered within a minute of the first update")
		}
	}
}

// envOf returns the lookup of variables in env (KEY=VALUE pairs, the
// last of a key winning, as exec does).
func envOf(env []string) func(string) string {
	return func(key string) string {
		v := ""
		for _, kv := range env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == key {
				v = val
			}
		}
		return v
	}
}

// processCPU is the processor time process pid has used so far, every
// thread's (/proc/PID/task/*/schedstat, in nanoseconds; a Go program's
// work runs on several threads, and /proc/PID/schedstat is the first
// one's alone). A thread that ended meanwhile is not counted: the keeper's
// threads live as long as it does.
func processCPU(b *testing.B, pid int) time.Duration {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	if err != nil || len(tasks) == 0 {
		b.Fatalf("the threads of process %d: %v", pid, err)
	}
	var sum time.Duration
	for _, task := range tasks {
		raw, err := os.ReadFile(task)
		if err != nil {
			continue // ended meanwhile
		}
		ns, err := strconv.ParseInt(strings.Fields(string(raw))[0], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		sum += time.Duration(ns)
	}
	return sum
}
