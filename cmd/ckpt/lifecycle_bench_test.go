package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Process benchmarks of the lifecycle commands: each iteration runs the
// real binary, as a hook or an orchestrator's script does. Run them with
//
//	go test -run '^$' -bench 'Lifecycle' -benchtime 20x ./cmd/ckpt
//
// Each reports the median wall time per process ("ms-median") besides the
// mean.

// BenchmarkLifecycleResume10kEvents500Steps runs `ckpt resume` on a
// checkpoint with 10,000 events and 500 steps.
func BenchmarkLifecycleResume10kEvents500Steps(b *testing.B) {
	bin := ckptBinary(b)
	st, store := newBenchStore(b)
	ctx := context.Background()
	actor := ckpt.Actor{Agent: "bench"}
	add := func(t ckpt.EventType, data any) {
		if _, err := st.Append(ctx, "big", ckpt.MustEvent(t, benchStart, actor, data), ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	// As a long session leaves it: steps started and finished (some
	// redone), a decision every 50 events, a file every 100.
	steps := make([]ckpt.Step, 500)
	for i := range steps {
		steps[i] = ckpt.Step{ID: fmt.Sprintf("step-%03d", i), Title: fmt.Sprintf("Convert post %d of the nature trail", i), Status: ckpt.StepPending}
	}
	add(ckpt.EventCreated, ckpt.Created{Steps: steps})
	for n := 1; n < 10000; n++ {
		i := (n / 2) % len(steps)
		switch {
		case n%50 == 0:
			add(ckpt.EventDecision, ckpt.DecisionData{Text: fmt.Sprintf("decision %d: keep the page numbers", n), Reason: "citations use them"})
		case n%100 == 1:
			add(ckpt.EventUpdate, ckpt.Patch{FilesModified: []string{fmt.Sprintf("out/post-%03d.md", i)}})
		case n%2 == 1:
			add(ckpt.EventStep, ckpt.StepChange{ID: steps[i].ID, Status: ckpt.StepInProgress})
		default:
			add(ckpt.EventStep, ckpt.StepChange{ID: steps[i].ID, Status: ckpt.StepDone, Output: fmt.Sprintf("out/post-%03d.md", i)})
		}
	}
	timeLoop(b, "resume", func() error {
		cmd := ckptCmd(bin, store, "resume", "big")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("ckpt resume: %v", err)
		}
		if !bytes.HasPrefix(out.Bytes(), []byte("# Resume: ")) {
			return fmt.Errorf("ckpt resume printed %q", out.Bytes())
		}
		return nil
	})
}

// BenchmarkLifecycleStale10k runs `ckpt stale --json` over 10,000
// checkpoints, thousands of which are stale; x-cat-index and
// x-cat-index-cpu are its time over `cat` of the store's journal/index in
// the same run (catIndexFloor).
func BenchmarkLifecycleStale10k(b *testing.B) {
	bin := ckptBinary(b)
	st, store := newBenchStore(b)
	intervals := []ckpt.Duration{ckpt.Duration(5 * time.Minute), ckpt.Duration(15 * time.Minute), ckpt.Duration(time.Hour)}
	addFeatures(b, st, 10000, func(i int, p *ckpt.Patch) { p.Interval = &intervals[i%3] })
	var cpus []time.Duration
	med := timeLoop(b, "stale", func() error {
		cmd := ckptCmd(bin, store, "stale", "--json")
		cmd.Env = append(cmd.Env, "CKPT_NOW=2026-01-15T15:10:00Z")
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 10 {
			return fmt.Errorf("ckpt stale: %v, want exit code 10", err)
		}
		cpus = append(cpus, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		if out.Len() < 3000*100 {
			return fmt.Errorf("ckpt stale --json printed only %d bytes", out.Len())
		}
		return nil
	})
	reportOverCatIndex(b, store, med, cpus)
}
