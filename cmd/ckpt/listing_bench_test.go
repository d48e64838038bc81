package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// BenchmarkListingProcesses measures issue 8's listing figures as the user
// sees them, whole ckpt processes against a filestore:
//
//   - ls-100k: `ckpt ls` (the table's first page, 50 rows) at 100,000
//     checkpoints; target 50 ms.
//   - stale-100k: `ckpt stale` at 100,000 checkpoints (all in progress,
//     updated two hours ago, nine in ten beating now, so 10,000 are
//     stale); target (issue 22) 20x cat-index-100k's CPU time.
//   - ls-json-10k: `ckpt ls --json` over 10,000 checkpoints; target
//     (issue 22) 15x cat-index-10k's CPU time.
//
// Floors measured in the same run: hello (a hello-world Go process) and
// cat-index-100k / cat-index-10k (`cat` reading the store's journal/index,
// the least a listing of every checkpoint reads). Each sub-benchmark
// reports its median wall time ("ms-median"), its ratios to the floors,
// and the median CPU time of the process (user + system, "cpu-ms-median",
// and its ratio to the floor's, "x-cat-index-…-cpu"):
// on a loaded machine a process waits for a core most of its wall time,
// and its CPU time is what an idle machine's two cores would share. The
// stores are seeded through the library, in parallel (several minutes at
// 100,000: run it once).
//
//	go test -run '^$' -bench ListingProcesses -benchtime 10x -timeout 30m ./cmd/ckpt
func BenchmarkListingProcesses(b *testing.B) {
	if testing.Short() {
		b.Skip("seeds 110,000 checkpoints")
	}
	hello := helloBinary(b)
	bin := ckptBinary(b)
	const bigN, smallN = 100_000, 10_000
	now := time.Now()
	big := seedListingStore(b, bigN, now.Add(-2*time.Hour), func(i int) bool { return i%10 != 0 })
	small := seedListingStore(b, smallN, now, func(i int) bool { return i%2 == 0 })

	var cpu time.Duration // the last process's CPU time (user + system)
	cpuMedians := map[string]time.Duration{}
	run := func(want int, path string, args ...string) func() error {
		return func() error {
			cmd := exec.Command(path, args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			out, err := cmd.StdoutPipe()
			if err != nil {
				return err
			}
			if err := cmd.Start(); err != nil {
				return err
			}
			lines, err := countLines(out)
			werr := cmd.Wait()
			cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			if err != nil {
				return err
			}
			// ckpt stale exits 10 when it finds a stale checkpoint.
			if ee, ok := werr.(*exec.ExitError); werr != nil && !(ok && ee.ExitCode() == 10 && args[len(args)-1] == "stale") {
				return fmt.Errorf("%s %v: %v: %s", filepath.Base(path), args, werr, errOut.Bytes())
			}
			if want >= 0 && lines != want {
				return fmt.Errorf("%s %v printed %d lines, want %d (stderr %q)", filepath.Base(path), args, lines, want, errOut.Bytes())
			}
			return nil
		}
	}
	cases := []struct {
		name, floor2 string
		fn           func() error
	}{
		{"hello", "", run(1, hello)},
		{"cat-index-100k", "", run(bigN+1, "cat", filepath.Join(big, "journal", "index"))},
		{"cat-index-10k", "", run(smallN+1, "cat", filepath.Join(small, "journal", "index"))},
		// A header and 50 rows.
		{"ls-100k", "", run(ckpt.DefaultPageSize+1, bin, "--store", big, "ls")},
		// A header and the 10,000 stale rows.
		{"stale-100k", "cat-index-100k", run(bigN/10+1, bin, "--store", big, "stale")},
		// "[", 10,000 rows, "]".
		{"ls-json-10k", "cat-index-10k", run(smallN+2, bin, "--store", small, "ls", "--json")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var cpus []time.Duration
			med := timeLoop(b, "listing-"+c.name, func() error {
				err := c.fn()
				cpus = append(cpus, cpu)
				return err
			})
			slices.Sort(cpus)
			cpuMed := cpus[len(cpus)/2]
			cpuMedians[c.name] = cpuMed
			b.ReportMetric(float64(cpuMed.Microseconds())/1000, "cpu-ms-median")
			if floor := medians["listing-hello"]; c.name != "hello" && floor > 0 {
				b.ReportMetric(float64(med)/float64(floor), "x-hello")
			}
			if floor := medians["listing-"+c.floor2]; c.floor2 != "" && floor > 0 {
				b.ReportMetric(float64(med)/float64(floor), "x-"+c.floor2)
			}
			// The goal's measure: CPU time over the floor's CPU time.
			if floor := cpuMedians[c.floor2]; c.floor2 != "" && floor > 0 {
				b.ReportMetric(float64(cpuMed)/float64(floor), "x-"+c.floor2+"-cpu")
			}
		})
	}
}

// countLines reads r to its end and counts its lines.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 256<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// seedListingStore creates a filestore of n checkpoints, each shaped like
// a real one (three steps, one done, a current step, a label), all in
// progress and last updated at updated; those beats approves beat now. It
// writes through the library (one durable create each, as ckpt start's),
// on several goroutines, lists once (folding the journal into its index)
// and adds 2,000 notes (a journal tail as a store in use has), and returns
// the store's path.
func seedListingStore(b *testing.B, n int, updated time.Time, beats func(i int) bool) string {
	b.Helper()
	store := filepath.Join(b.TempDir(), ".ckpt")
	st, err := filestore.Init(store, filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if err := seedListed(ctx, st, i, updated, beats(i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("%v (open files: %s)", err, openFiles())
	}
	// A store in use: a listing has folded the journal into the index,
	// and writes have gone on since (a journal tail of 2,000 lines; the
	// store folds it past 4,096).
	if _, err := st.List(ctx, ckpt.ListOptions{Limit: 1}); err != nil {
		b.Fatal(err)
	}
	for i := range 2000 {
		k := i * (n / 2000)
		id := fmt.Sprintf("agent-%02d/task-%06d", k%50, k)
		e := ckpt.MustEvent(ckpt.EventNote, updated, ckpt.Actor{Agent: "bench"}, ckpt.Note{Text: "still here"})
		if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return store
}

// seedListed writes checkpoint i of a listing benchmark.
func seedListed(ctx context.Context, st *filestore.Store, i int, at time.Time, beat bool) error {
	id := fmt.Sprintf("agent-%02d/task-%06d", i%50, i)
	title := fmt.Sprintf("Schedule fetcher spec %d", i)
	step := "writing acceptance criteria"
	status := ckpt.StatusInProgress
	actor := ckpt.Actor{Agent: fmt.Sprintf("agent-%02d", i%50)}
	e := ckpt.MustEvent(ckpt.EventCreated, at, actor, ckpt.Created{
		Patch: ckpt.Patch{Title: &title, Status: &status, Agent: &ckpt.Agent{ID: actor.Agent, Name: "Secondary-A"},
			AddLabels: []string{"spec"}, CurrentStep: &step, FilesModified: []string{"feature_02/spec.md"}},
		Steps: []ckpt.Step{{ID: "research", Title: "Research the API", Status: ckpt.StepDone, Output: "research/NOTES.md"},
			{ID: "spec", Title: "Write the spec"}, {ID: "checklist", Title: "Write the checklist"}},
	})
	if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
		return err
	}
	if beat {
		return st.Beat(ctx, id, ckpt.Signal{At: time.Now()})
	}
	return nil
}

// openFiles counts this process's open files by the directory they are in
// (Linux), to say what holds them when seeding runs out of them.
func openFiles() string {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err.Error()
	}
	by := map[string]int{}
	for _, de := range des {
		target, err := os.Readlink("/proc/self/fd/" + de.Name())
		if err != nil {
			continue
		}
		by[filepath.Base(filepath.Dir(target))+"/"+filepath.Base(target)]++
	}
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range by {
		top = append(top, kv{k, n})
	}
	slices.SortFunc(top, func(a, b kv) int { return b.n - a.n })
	return fmt.Sprintf("%d, most %v", len(des), top[:min(5, len(top))])
}
