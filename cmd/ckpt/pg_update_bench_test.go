package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/pgtest"
)

// pgBenchCluster is BenchmarkUpdateOverPostgreSQL's own cluster (TestPostgreSQL
// closes pgCluster when it ends).
var pgBenchCluster pgtest.Cluster

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
//     connection outlives the process, so no backend starts for it.
//
// It reports each case's median wall time (NAME-ms), pg's and pg-direct's
// ratio to local in wall and CPU time (the client process's user+system;
// NAME-vs-local-x, NAME-vs-local-cpu-x) and the database server's CPU
// per pg update (a connection is a backend process started for it).
//
//	go test -run '^$' -bench UpdateOverPostgreSQL -benchtime 100x ./cmd/ckpt
func BenchmarkUpdateOverPostgreSQL(b *testing.B) {
	pgBenchCluster.Need(b)
	b.Cleanup(func() { pgBenchCluster.Close() })
	hello := helloBinary(b)
	bin := ckptBinary(b)
	pg := filepath.Join(filepath.Dir(bin), "ckpt-pg")
	dir := b.TempDir()
	local := filepath.Join(dir, ".ckpt")
	url := pgBenchCluster.URL(pgBenchCluster.NewDatabase(b))
	for _, store := range []string{local, url} {
		if store == local {
			if _, err := ckptRun(b, bin, "--store", store, "init"); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := ckptRun(b, bin, "--store", store, "start", "kai-7/secondary-a", "--step", "research", "--step", "spec"); err != nil {
			b.Fatal(err)
		}
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=kai", "CKPT_ID=kai-7/secondary-a"}
	i := 0
	update := func(prog, store string) func() []string {
		return func() []string {
			return []string{prog, "--store", store, "update", "kai-7/secondary-a", "--stage", "S2.P2",
				"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md"}
		}
	}
	cases := []struct {
		name string
		args func() []string
		pg   bool
	}{
		{"hello", func() []string { return []string{hello} }, false},
		{"local", update(bin, local), false},
		{"pg", update(bin, url), true},
		{"pg-direct", update(pg, url), true},
	}
	pooled, poolerCPU := startPgBouncer(b, url)
	if pooled != "" {
		cases = append(cases, struct {
			name string
			args func() []string
			pg   bool
		}{"pg-pooled", update(bin, pooled), true})
	} else {
		b.Log("pg-pooled left out: pgbouncer is not installed")
	}
	wall := make([][]time.Duration, len(cases))
	cpu := make([][]time.Duration, len(cases))
	serverCPU := make([]time.Duration, len(cases))
	var pooler time.Duration // PgBouncer's CPU in the pooled runs
	runs := 0
	for b.Loop() {
		i++
		for k := range cases {
			c := (k + i) % len(cases) // each case first in turn
			args := cases[c].args()
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = dir
			cmd.Env = env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			before, err := pgBenchCluster.CPU()
			if err != nil {
				b.Fatal(err)
			}
			var pooler0 time.Duration
			if cases[c].name == "pg-pooled" {
				pooler0 = poolerCPU()
			}
			t := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s %v: %v: %s", filepath.Base(args[0]), args[1:], err, out.Bytes())
			}
			wall[c] = append(wall[c], time.Since(t))
			cpu[c] = append(cpu[c], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			if cases[c].pg {
				after, err := pgBenchCluster.CPU()
				if err != nil {
					b.Fatal(err)
				}
				serverCPU[c] += after - before
			}
			if cases[c].name == "pg-pooled" {
				pooler += poolerCPU() - pooler0
			}
		}
		runs++
	}
	med := func(ts []time.Duration) time.Duration { return median(slices.Clone(ts)) }
	for k, c := range cases {
		b.ReportMetric(float64(med(wall[k]).Microseconds())/1000, c.name+"-ms")
		if c.pg {
			b.ReportMetric(float64(med(wall[k]))/float64(med(wall[1])), c.name+"-vs-local-x")
			b.ReportMetric(float64(med(cpu[k]))/float64(med(cpu[1])), c.name+"-vs-local-cpu-x")
			if runs > 0 {
				b.ReportMetric(float64((serverCPU[k] / time.Duration(runs)).Microseconds()), c.name+"-server-cpu-µs")
			}
		}
	}
	b.ReportMetric(float64(med(cpu[1]))/float64(med(cpu[0])), "local-vs-hello-cpu-x")
	if pooled != "" && runs > 0 {
		b.ReportMetric(float64((pooler / time.Duration(runs)).Microseconds()), "pg-pooled-pgbouncer-cpu-µs")
	}
}
