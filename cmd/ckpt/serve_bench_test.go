package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkProcessUpdateRemote runs `ckpt update` as a whole process in
// both places, alternately in one loop: against the local store (the
// floor) and against a `ckpt serve` of that store on loopback with
// CKPT_STORE and CKPT_TOKEN. It reports both medians, the remote one's
// ratio to the local one ("x-local"; target: within 1.5) and the ratio of
// the client processes' CPU time ("x-local-cpu").
//
//	go test -run '^$' -bench ProcessUpdateRemote -benchtime 200x ./cmd/ckpt
func BenchmarkProcessUpdateRemote(b *testing.B) {
	bin := ckptBinary(b)
	dir := b.TempDir()
	store := filepath.Join(dir, ".ckpt")
	if _, err := ckptRun(b, bin, "--store", store, "init"); err != nil {
		b.Fatal(err)
	}
	if _, err := ckptRun(b, bin, "--store", store, "start", "kai-7/secondary-a", "--step", "research", "--step", "spec"); err != nil {
		b.Fatal(err)
	}
	// update runs one ckpt update and returns the process's CPU time (the
	// client's: a served update's server work is on the server's side).
	update := func(id string, env []string, i int) (time.Duration, error) {
		cmd := exec.Command(bin, "update", id, "--stage", "S2.P2",
			"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("ckpt update: %v: %s", err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	if _, err := ckptRun(b, bin, "--store", store, "start", "kai-7/secondary-b", "--step", "research", "--step", "spec"); err != nil {
		b.Fatal(err)
	}
	srv := startServe(b, bin, store, "127.0.0.1:0")
	// Directly: BenchmarkUpdateOverServer measures the keeper's path.
	remote := []string{"CKPT_STORE=" + srv.url, "CKPT_TOKEN=" + srv.admin, "CKPT_KEEPER=off"}
	// Local and remote alternate in one loop, each on a checkpoint of its
	// own, so that a shared machine's load weighs on both alike.
	var local, served, localCPU, servedCPU []time.Duration
	i := 0
	for b.Loop() {
		i++
		for _, c := range []struct {
			id        string
			env       []string
			wall, cpu *[]time.Duration
		}{{"kai-7/secondary-a", nil, &local, &localCPU}, {"kai-7/secondary-b", remote, &served, &servedCPU}} {
			t := time.Now()
			cpu, err := update(c.id, c.env, i)
			if err != nil {
				b.Fatal(err)
			}
			*c.wall = append(*c.wall, time.Since(t))
			*c.cpu = append(*c.cpu, cpu)
		}
	}
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	l, r := median(local), median(served)
	b.ReportMetric(float64(l.Microseconds())/1000, "local-ms")
	b.ReportMetric(float64(r.Microseconds())/1000, "remote-ms")
	b.ReportMetric(float64(r)/float64(l), "x-local")
	b.ReportMetric(float64(median(servedCPU))/float64(median(localCPU)), "x-local-cpu")
}
