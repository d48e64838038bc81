package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// Benchmarks of the lifecycle commands' run functions against a real
// filestore (fsync and all). Run them with
//
//	go test -run '^$' -bench 'Resume|Stale' -benchtime 20x ./internal/cli

// bigCheckpoint makes checkpoint "big" in st with 500 steps and 10,000
// events in all, as a long session leaves it: steps started and finished
// (some redone), a decision every 50 events, a file every 100.
func bigCheckpoint(tb testing.TB, st ckpt.Store) {
	tb.Helper()
	ctx := context.Background()
	steps := make([]ckpt.Step, 500)
	for i := range steps {
		steps[i] = ckpt.Step{ID: fmt.Sprintf("step-%03d", i), Title: fmt.Sprintf("Convert post %d of the nature trail", i), Status: ckpt.StepPending}
	}
	title := "Convert the PDFs"
	for n, e := range bigHistory(title, steps) {
		if _, err := st.Append(ctx, "big", e, ckpt.AppendOptions{}); err != nil {
			tb.Fatalf("event %d: %v", n+1, err)
		}
	}
}

// bigHistory returns the 10,000 events bigCheckpoint appends.
func bigHistory(title string, steps []ckpt.Step) []ckpt.Event {
	actor := ckpt.Actor{Agent: "bench"}
	events := []ckpt.Event{ckpt.MustEvent(ckpt.EventCreated, t0, actor, ckpt.Created{Patch: ckpt.Patch{Title: &title}, Steps: steps})}
	for n := 1; n < 10000; n++ {
		i := (n / 2) % len(steps)
		var e ckpt.Event
		switch {
		case n%50 == 0:
			e = ckpt.MustEvent(ckpt.EventDecision, t0, actor, ckpt.DecisionData{Text: fmt.Sprintf("decision %d: keep the page numbers", n), Reason: "citations use them"})
		case n%100 == 1:
			e = ckpt.MustEvent(ckpt.EventUpdate, t0, actor, ckpt.Patch{FilesModified: []string{fmt.Sprintf("out/post-%03d.md", i)}})
		case n%2 == 1:
			e = ckpt.MustEvent(ckpt.EventStep, t0, actor, ckpt.StepChange{ID: steps[i].ID, Status: ckpt.StepInProgress})
		default:
			e = ckpt.MustEvent(ckpt.EventStep, t0, actor, ckpt.StepChange{ID: steps[i].ID, Status: ckpt.StepDone, Output: fmt.Sprintf("out/post-%03d.md", i)})
		}
		events = append(events, e)
	}
	return events
}

// BenchmarkResume10kEvents500Steps runs ckpt resume's run function on a
// checkpoint with 10,000 events and 500 steps: read the state, append the
// session.resumed event durably, render the prompt.
func BenchmarkResume10kEvents500Steps(b *testing.B) {
	st, err := filestore.Init(filepath.Join(b.TempDir(), ".ckpt"), filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	bigCheckpoint(b, st)
	o := &ResumeOptions{
		common: common{
			IO:    cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
			Now:   func() time.Time { return t0 },
			Store: func() (ckpt.Store, error) { return st, nil },
		},
		nextSession: nextSession{ID: "big"},
	}
	for b.Loop() {
		if err := runResume(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}

// manyCheckpoints makes n checkpoints in st, every 7th done, the rest
// silent since t0 with 5m, 15m or 1h intervals.
func manyCheckpoints(tb testing.TB, st ckpt.Store, n int) {
	tb.Helper()
	ctx := context.Background()
	intervals := []ckpt.Duration{ckpt.Duration(5 * time.Minute), ckpt.Duration(15 * time.Minute), ckpt.Duration(time.Hour)}
	for i := range n {
		title := fmt.Sprintf("Feature %d", i)
		cr := ckpt.Created{Patch: ckpt.Patch{Title: &title, Agent: &ckpt.Agent{ID: fmt.Sprintf("agent-%d", i%16)}, Interval: &intervals[i%3]},
			Steps: []ckpt.Step{{ID: "plan"}, {ID: "build"}, {ID: "verify"}}}
		if i%7 == 0 {
			s := ckpt.StatusDone
			cr.Status = &s
		}
		if _, err := st.Append(ctx, fmt.Sprintf("epic-%d/feature-%05d", i%10, i), ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, cr), ckpt.AppendOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkStale10k runs ckpt stale's run function over 10,000 checkpoints
// 40 minutes after they last showed life (so it reports thousands).
// x-read-index-cpu is its CPU time over reading the store's journal/index
// whole (the floor of a listing of every checkpoint) in the same loop.
func BenchmarkStale10k(b *testing.B) {
	dir := filepath.Join(b.TempDir(), ".ckpt")
	st, err := filestore.Init(dir, filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	manyCheckpoints(b, st, 10000)
	o := &StaleOptions{common: common{
		IO:    cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		Now:   func() time.Time { return t0.Add(40 * time.Minute) },
		Store: func() (ckpt.Store, error) { return st, nil },
	}}
	var inStale, inFloor time.Duration
	for b.Loop() {
		c0 := cpuNow(b)
		if err := runStale(context.Background(), o); !errors.Is(err, errStaleFound) {
			b.Fatalf("stale over 10k: %v, want stale ones found", err)
		}
		c1 := cpuNow(b)
		if _, err := os.ReadFile(filepath.Join(dir, "journal", "index")); err != nil {
			b.Fatal(err)
		}
		inStale, inFloor = inStale+c1-c0, inFloor+cpuNow(b)-c1
	}
	if inFloor > 0 {
		b.ReportMetric(float64(inStale)/float64(inFloor), "x-read-index-cpu")
	}
}

// cpuNow returns this process's CPU time so far (user + system).
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
