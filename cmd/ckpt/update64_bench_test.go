package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkUpdate64Processes measures 64 agents updating at once, each its
// own `ckpt update` process on its own checkpoint of one local store,
// against its floor measured in the same loop: 64 processes of a static Go
// program that appends 300 bytes to its own file and fdatasyncs it (what
// one durable update must do at least, as a process). Each iteration runs
// one wave of each, alternating, so both see the same disk and load.
// x-floor-rate is the ckpt wave's rate over the floor wave's (issue 22's
// goal: at least 0.7); cpu-x-floor is the ratio of their CPU time per
// process, faults/update and floor-faults/append their minor page faults
// per process (most of a short Go process's kernel time).
//
// A third wave in each iteration splits ckpt's cost in two: 64 processes
// of a minimal Go program that makes the same update through filestore
// itself (Open, one Append, as `ckpt update` does, on checkpoints of the
// same store) and nothing else: no command line, no other package. Its
// store-only-x-floor-rate and store-only-cpu-x-floor are what the store's
// append allows any process; the rest of ckpt's cost is its command line,
// its packages' initialisation and its binary's size (docs/design.md,
// start-up round five).
//
//	go test -run '^$' -bench Update64Processes -benchtime 10x ./cmd/ckpt
func BenchmarkUpdate64Processes(b *testing.B) {
	const n = 64
	bin := ckptBinary(b)
	floor := appendSyncBinary(b)
	storeOnly := storeOnlyBinary(b)
	store := newProcessStore(b, bin)
	ids, others := make([]string, n), make([]string, n)
	for i := range ids {
		ids[i], others[i] = fmt.Sprintf("fleet/agent-%02d", i), fmt.Sprintf("fleet/store-only-%02d", i)
		for _, id := range []string{ids[i], others[i]} {
			if _, err := ckptRun(b, bin, "--store", store, "start", id, "--step", "research", "--step", "spec"); err != nil {
				b.Fatal(err)
			}
		}
	}
	files := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	type total struct {
		wall, cpu time.Duration // wall of the waves, CPU per process summed over them
		faults    int64
	}
	var ckptT, floorT, storeT total
	wave := func(t *total, args func(i int) (string, []string)) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var cpu time.Duration
		errs := make(chan error, n)
		t0 := time.Now()
		for i := range n {
			wg.Go(func() {
				path, a := args(i)
				cmd := exec.Command(path, a...)
				cmd.Env = env
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("%s %v: %v: %s", filepath.Base(path), a, err, out)
					return
				}
				mu.Lock()
				cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					t.faults += ru.Minflt
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		t.wall += time.Since(t0)
		t.cpu += cpu / n
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	k := 0
	for b.Loop() {
		k++
		step := fmt.Sprintf("writing the spec, pass %d", k)
		wave(&floorT, func(i int) (string, []string) {
			return floor, []string{filepath.Join(files, fmt.Sprintf("agent-%02d", i))}
		})
		ckptWave := func() {
			wave(&ckptT, func(i int) (string, []string) {
				return bin, []string{"--store", store, "update", ids[i], "--current-step", step}
			})
		}
		storeWave := func() {
			wave(&storeT, func(i int) (string, []string) { return storeOnly, []string{store, others[i], step} })
		}
		if k%2 == 1 { // each first in turn after the floor
			ckptWave()
			storeWave()
		} else {
			storeWave()
			ckptWave()
		}
	}
	perProcess := func(t total) float64 { return float64(t.cpu.Microseconds()) / 1000 / float64(k) }
	b.ReportMetric(float64(n*k)/ckptT.wall.Seconds(), "updates/s")
	b.ReportMetric(float64(n*k)/floorT.wall.Seconds(), "floor-appends/s")
	b.ReportMetric(float64(floorT.wall)/float64(ckptT.wall), "x-floor-rate")
	b.ReportMetric(float64(ckptT.cpu)/float64(floorT.cpu), "cpu-x-floor")
	b.ReportMetric(perProcess(ckptT), "cpu-ms/update")
	b.ReportMetric(perProcess(floorT), "floor-cpu-ms/append")
	b.ReportMetric(float64(ckptT.faults)/float64(n*k), "faults/update")
	b.ReportMetric(float64(floorT.faults)/float64(n*k), "floor-faults/append")
	b.ReportMetric(float64(floorT.wall)/float64(storeT.wall), "store-only-x-floor-rate")
	b.ReportMetric(float64(storeT.cpu)/float64(floorT.cpu), "store-only-cpu-x-floor")
	b.ReportMetric(float64(storeT.faults)/float64(n*k), "store-only-faults/update")
}

var (
	storeOnlyOnce sync.Once
	storeOnlyPath string
	storeOnlyErr  error
)

// storeOnlyBinary builds the third wave's program: `STORE ID STEP` makes
// the update `ckpt --store STORE update ID --current-step STEP` makes
// (the same event, actor and options) through filestore, and nothing else.
func storeOnlyBinary(tb testing.TB) string {
	tb.Helper()
	storeOnlyOnce.Do(func() {
		dir, err := buildDir("ckpt-storeonly-")
		if err != nil {
			storeOnlyErr = err
			return
		}
		src := filepath.Join(dir, "storeonly.go")
		err = os.WriteFile(src, []byte(`package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

func main() {
	st, err := filestore.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	step := os.Args[3]
	e, err := ckpt.NewEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "user:" + os.Getenv("USER")}, ckpt.Patch{CurrentStep: &step})
	if err == nil {
		_, err = st.Append(context.Background(), os.Args[2], e, ckpt.AppendOptions{AsCheckpointAgent: true})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st.Close()
}
`), 0o644)
		if err != nil {
			storeOnlyErr = err
			return
		}
		storeOnlyPath = filepath.Join(dir, "storeonly")
		// Built from this directory, inside the module: the program uses
		// this tree's ckpt and filestore.
		cmd := exec.Command("go", "build", "-o", storeOnlyPath, src)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			storeOnlyErr = fmt.Errorf("go build storeonly.go: %v\n%s", err, out)
		}
	})
	if storeOnlyErr != nil {
		tb.Fatalf("building the store-only process: %v", storeOnlyErr)
	}
	return storeOnlyPath
}

var (
	appendSyncOnce sync.Once
	appendSyncPath string
	appendSyncErr  error
)

// appendSyncBinary builds the floor of a durable update as a process: a
// static Go program that appends a 300-byte line to the file its argument
// names (creating it) and fdatasyncs it.
func appendSyncBinary(tb testing.TB) string {
	tb.Helper()
	appendSyncOnce.Do(func() {
		dir, err := buildDir("ckpt-appendsync-")
		if err != nil {
			appendSyncErr = err
			return
		}
		src := filepath.Join(dir, "appendsync.go")
		err = os.WriteFile(src, []byte(`package main

import (
	"os"
	"syscall"
)

func main() {
	fd, err := syscall.Open(os.Args[1], syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		os.Exit(1)
	}
	line := make([]byte, 300)
	for i := range line {
		line[i] = 'x'
	}
	line[299] = '\n'
	if _, err := syscall.Write(fd, line); err != nil {
		os.Exit(1)
	}
	if err := syscall.Fdatasync(fd); err != nil {
		os.Exit(1)
	}
}
`), 0o644)
		if err != nil {
			appendSyncErr = err
			return
		}
		appendSyncPath = filepath.Join(dir, "appendsync")
		cmd := exec.Command("go", "build", "-o", appendSyncPath, src)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GO111MODULE=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			appendSyncErr = fmt.Errorf("go build appendsync.go: %v\n%s", err, out)
		}
	})
	if appendSyncErr != nil {
		tb.Fatalf("building the write+fdatasync floor: %v", appendSyncErr)
	}
	return appendSyncPath
}
