package main

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// catIndexFloor is the floor of a listing of every checkpoint as a
// process (issue 22): `cat` of the store's journal/index into a pipe this
// process drains. It returns the median wall and CPU time of five runs.
func catIndexFloor(b *testing.B, store string) (wall, cpu time.Duration) {
	b.Helper()
	var walls, cpus []time.Duration
	for range 5 {
		cmd := exec.Command("cat", filepath.Join(store, "journal", "index"))
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := countLines(out); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		walls = append(walls, time.Since(t0))
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return walls[2], cpus[2]
}

// reportOverCatIndex reports a listing process's median wall and CPU time
// over catIndexFloor's, measured after it in the same run.
func reportOverCatIndex(b *testing.B, store string, wall time.Duration, cpus []time.Duration) {
	b.Helper()
	fw, fc := catIndexFloor(b, store)
	b.ReportMetric(float64(wall)/float64(fw), "x-cat-index")
	if len(cpus) > 0 && fc > 0 {
		slices.Sort(cpus)
		b.ReportMetric(float64(cpus[len(cpus)/2])/float64(fc), "x-cat-index-cpu")
	}
}
