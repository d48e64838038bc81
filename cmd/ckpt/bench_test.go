package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// Process-level benchmarks: each iteration starts a process, as an agent's
// hook or shell does. Run them with
//
//	go test -run '^$' -bench . -benchtime 200x ./cmd/ckpt
//
// They report the median wall time per process ("ms-median") besides the
// mean, because a few slow forks on a busy machine move the mean.

// medians remembers each benchmark's median, so a later benchmark in the same
// run can report its ratio to an earlier one.
var medians = map[string]time.Duration{}

// timeLoop runs fn once per b.Loop iteration and reports the median.
func timeLoop(b *testing.B, name string, fn func() error) time.Duration {
	b.Helper()
	var times []time.Duration
	for b.Loop() {
		t := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t))
	}
	slices.Sort(times)
	med := times[len(times)/2]
	medians[name] = med
	b.ReportMetric(float64(med.Microseconds())/1000, "ms-median")
	return med
}

// BenchmarkProcessUpdate runs `ckpt update` as a whole process (start-up,
// store discovery, lock, durable append, state replace) against a filestore.
// Target: median under 10 ms.
func BenchmarkProcessUpdate(b *testing.B) {
	bin := ckptBinary(b)
	dir := b.TempDir()
	store := filepath.Join(dir, ".ckpt")
	if _, err := ckptRun(b, bin, "--store", store, "init"); err != nil {
		b.Fatal(err)
	}
	if _, err := ckptRun(b, bin, "--store", store, "start", "kai-7/secondary-a", "--step", "research", "--step", "spec"); err != nil {
		b.Fatal(err)
	}
	i := 0
	timeLoop(b, "ckpt", func() error {
		i++
		// The working directory holds the store: ckpt finds it like git.
		cmd := exec.Command(bin, "update", "kai-7/secondary-a", "--stage", "S2.P2",
			"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ckpt update: %v: %s", err, out)
		}
		return nil
	})
}

// BenchmarkSeed002Heartbeat runs one heartbeat the way seed 002's text writes
// it (testdata/seed002/heartbeat.sh: backup_checkpoint, heredoc rewrite with
// jq reads, jq verify), for comparison with BenchmarkProcessUpdate. When that
// ran first in the same run it reports the ratio ("x-ckpt-update").
func BenchmarkSeed002Heartbeat(b *testing.B) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Fatalf("%s is not installed, and the seed 002 heartbeat needs it: install it (apt-get install -y %s) and run again", tool, tool)
		}
	}
	scripts, err := filepath.Abs("testdata/seed002")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	run := func(script string) error {
		cmd := exec.Command("bash", filepath.Join(scripts, script))
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", script, err, out)
		}
		if script == "heartbeat.sh" && string(out) != "Checkpoint updated\nCheckpoint valid\n" {
			return fmt.Errorf("heartbeat.sh did not verify its checkpoint: %s", out)
		}
		return nil
	}
	if err := run("create.sh"); err != nil {
		b.Fatal(err)
	}
	med := timeLoop(b, "seed002", func() error { return run("heartbeat.sh") })
	if c, ok := medians["ckpt"]; ok && c > 0 {
		b.ReportMetric(float64(med)/float64(c), "x-ckpt-update")
	}
}

// BenchmarkLsJSON10k runs `ckpt ls --json` as a process over a store of
// 10,000 checkpoints. Target: median under 200 ms; x-cat-index and
// x-cat-index-cpu are its wall and CPU time over `cat` of the store's
// journal/index (catIndexFloor) in the same run.
func BenchmarkLsJSON10k(b *testing.B) {
	const n = 10000
	bin := ckptBinary(b)
	st, store := newBenchStore(b)
	addFeatures(b, st, n, func(i int, p *ckpt.Patch) {
		title := fmt.Sprintf("Feature %d", i)
		p.Title = &title
	})
	st.Close()
	var cpus []time.Duration
	med := timeLoop(b, "ls", func() error {
		cmd := exec.Command(bin, "--store", store, "ls", "--json")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return err
		}
		nb, _ := io.Copy(io.Discard, out)
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("ckpt ls --json: %v", err)
		}
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		if nb < n*100 {
			return fmt.Errorf("ckpt ls --json printed only %d bytes for %d checkpoints", nb, n)
		}
		return nil
	})
	reportOverCatIndex(b, store, med, cpus)
}

var benchStart = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// newBenchStore creates a filestore in a fresh temporary directory and
// returns it with its path; the caller closes it.
func newBenchStore(b *testing.B) (*filestore.Store, string) {
	b.Helper()
	store := filepath.Join(b.TempDir(), ".ckpt")
	st, err := filestore.Init(store, filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return st, store
}

// addFeatures creates n checkpoints epic-(i%10)/feature-(i), each by agent
// agent-(i%16) with the steps plan, build and verify, created at benchStart;
// patch, when not nil, adds to checkpoint i's first patch.
func addFeatures(b *testing.B, st *filestore.Store, n int, patch func(i int, p *ckpt.Patch)) {
	b.Helper()
	ctx := context.Background()
	for i := range n {
		cr := ckpt.Created{
			Patch: ckpt.Patch{Agent: &ckpt.Agent{ID: fmt.Sprintf("agent-%d", i%16)}},
			Steps: []ckpt.Step{{ID: "plan"}, {ID: "build"}, {ID: "verify"}},
		}
		if patch != nil {
			patch(i, &cr.Patch)
		}
		e := ckpt.MustEvent(ckpt.EventCreated, benchStart, ckpt.Actor{Agent: "bench"}, cr)
		if _, err := st.Append(ctx, fmt.Sprintf("epic-%d/feature-%05d", i%10, i), e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
