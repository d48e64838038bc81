package main

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// BenchmarkLsFirstPage10k runs `ckpt ls` (the table's first page of 50
// rows, one List call) as a process over 10,000 checkpoints, next to
// `ckpt --help` as the floor of a process start in the same run.
func BenchmarkLsFirstPage10k(b *testing.B) {
	const n = 10000
	bin := ckptBinary(b)
	st, store := newBenchStore(b)
	addFeatures(b, st, n, func(i int, p *ckpt.Patch) {
		title := fmt.Sprintf("Feature %d", i)
		p.Title = &title
	})
	st.Close()
	var floors []time.Duration
	for range 5 {
		t := time.Now()
		if err := exec.Command(bin, "--help").Run(); err != nil {
			b.Fatal(err)
		}
		floors = append(floors, time.Since(t))
	}
	slices.Sort(floors)
	floor := floors[2]
	page := timeLoop(b, "ls", func() error {
		cmd := ckptCmd(bin, store, "ls")
		var errOut strings.Builder
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("ckpt ls: %v", err)
		}
		if lines := strings.Count(string(out), "\n"); lines != ckpt.DefaultPageSize+1 || !strings.Contains(errOut.String(), "--after") {
			return fmt.Errorf("ckpt ls printed %d lines and %q", lines, errOut.String())
		}
		return nil
	})
	b.ReportMetric(float64(page)/float64(floor), "x-floor")
}
