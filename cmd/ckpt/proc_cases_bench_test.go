package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/pgtest"
)

// procCase is one whole process a PostgreSQL benchmark times against a
// local one (BenchmarkUpdateOverPostgreSQL, BenchmarkHookOverPostgreSQL).
type procCase struct {
	name string
	// cmd is a fresh command for one run, its output not yet directed.
	cmd func() *exec.Cmd
	// pg: the database's CPU is counted for this case.
	pg bool
	// sideCPU, when set, is the CPU so far of a process working for this
	// case beside it (a keeper, a pooler), reported as sideMetric.
	sideCPU    func() time.Duration
	sideMetric string
	// quiet: the command must print nothing (a hook's answer).
	quiet bool
}

// procTimes is what runProcCases measured, indexed like its cases.
type procTimes struct {
	wall, cpu [][]time.Duration
	server    []time.Duration // the database's CPU, summed over runs
	side      []time.Duration // sideCPU's, summed over runs
	runs      int
}

// benchCluster starts a PostgreSQL cluster for one run of a benchmark and
// stops it when that run ends. Each benchmark has its own (TestPostgreSQL
// closes the package's cluster when it ends), and each run under -count a
// new one: a closed Cluster does not start again.
func benchCluster(b *testing.B) *pgtest.Cluster {
	c := new(pgtest.Cluster)
	b.Cleanup(func() { c.Close() })
	c.Need(b)
	return c
}

// runProcCases runs every case once per iteration of b's loop, each case
// first in turn (so that none always follows another), and measures each
// run's wall time, its process's CPU, the cluster's CPU (pg cases) and its
// side process's CPU.
func runProcCases(b *testing.B, cluster *pgtest.Cluster, cases []procCase) procTimes {
	t := procTimes{
		wall: make([][]time.Duration, len(cases)), cpu: make([][]time.Duration, len(cases)),
		server: make([]time.Duration, len(cases)), side: make([]time.Duration, len(cases)),
	}
	for b.Loop() {
		for k := range cases {
			i := (k + t.runs) % len(cases)
			c := &cases[i]
			cmd := c.cmd()
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			var server0, side0 time.Duration
			if c.pg {
				server0 = clusterCPU(b, cluster)
			}
			if c.sideCPU != nil {
				side0 = c.sideCPU()
			}
			start := time.Now()
			if err := cmd.Run(); err != nil || (c.quiet && out.Len() > 0) {
				b.Fatalf("%s: %s %v: %v: %s", c.name, filepath.Base(cmd.Path), cmd.Args[1:], err, out.Bytes())
			}
			t.wall[i] = append(t.wall[i], time.Since(start))
			t.cpu[i] = append(t.cpu[i], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			if c.pg {
				t.server[i] += clusterCPU(b, cluster) - server0
			}
			if c.sideCPU != nil {
				t.side[i] += c.sideCPU() - side0
			}
		}
		t.runs++
	}
	return t
}

// report reports each case's median wall time (NAME-ms); for each pg
// case its ratios to case local in wall and client CPU
// (NAME-vs-local-x, NAME-vs-local-cpu-x) and the database's CPU per run
// (NAME-server-cpu-µs); each side process's CPU per run (its
// sideMetric); and the local case's CPU (local-cpu-µs).
func (t procTimes) report(b *testing.B, cases []procCase, local int) {
	med := func(ts []time.Duration) time.Duration { return median(slices.Clone(ts)) }
	if t.runs == 0 {
		return
	}
	perRun := func(d time.Duration) float64 { return float64((d / time.Duration(t.runs)).Microseconds()) }
	for k, c := range cases {
		b.ReportMetric(float64(med(t.wall[k]).Microseconds())/1000, c.name+"-ms")
		if c.pg {
			b.ReportMetric(float64(med(t.wall[k]))/float64(med(t.wall[local])), c.name+"-vs-local-x")
			b.ReportMetric(float64(med(t.cpu[k]))/float64(med(t.cpu[local])), c.name+"-vs-local-cpu-x")
			b.ReportMetric(perRun(t.server[k]), c.name+"-server-cpu-µs")
		}
		if c.sideCPU != nil {
			b.ReportMetric(perRun(t.side[k]), c.sideMetric)
		}
	}
	b.ReportMetric(float64(med(t.cpu[local]).Microseconds()), "local-cpu-µs")
}

// clusterCPU is c's processor time so far (pgtest.Cluster.CPU).
func clusterCPU(b *testing.B, c *pgtest.Cluster) time.Duration {
	t, err := c.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return t
}
