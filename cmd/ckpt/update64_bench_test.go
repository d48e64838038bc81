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
//	go test -run '^$' -bench Update64Processes -benchtime 10x ./cmd/ckpt
func BenchmarkUpdate64Processes(b *testing.B) {
	const n = 64
	bin := ckptBinary(b)
	floor := appendSyncBinary(b)
	store := newProcessStore(b, bin)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("fleet/agent-%02d", i)
		if _, err := ckptRun(b, bin, "--store", store, "start", ids[i], "--step", "research", "--step", "spec"); err != nil {
			b.Fatal(err)
		}
	}
	files := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	wave := func(args func(i int) (string, []string)) (wall, cpuPer time.Duration, faults int64) {
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
					faults += ru.Minflt
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		wall = time.Since(t0)
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		return wall, cpu / n, faults
	}
	var ckptWall, floorWall, ckptCPU, floorCPU time.Duration
	var ckptFaults, floorFaults int64
	k := 0
	for b.Loop() {
		k++
		w, c, f := wave(func(i int) (string, []string) {
			return floor, []string{filepath.Join(files, fmt.Sprintf("agent-%02d", i))}
		})
		floorWall, floorCPU, floorFaults = floorWall+w, floorCPU+c, floorFaults+f
		w, c, f = wave(func(i int) (string, []string) {
			return bin, []string{"--store", store, "update", ids[i], "--current-step", fmt.Sprintf("writing the spec, pass %d", k)}
		})
		ckptWall, ckptCPU, ckptFaults = ckptWall+w, ckptCPU+c, ckptFaults+f
	}
	b.ReportMetric(float64(n*k)/ckptWall.Seconds(), "updates/s")
	b.ReportMetric(float64(n*k)/floorWall.Seconds(), "floor-appends/s")
	b.ReportMetric(float64(floorWall)/float64(ckptWall), "x-floor-rate")
	b.ReportMetric(float64(ckptCPU)/float64(floorCPU), "cpu-x-floor")
	b.ReportMetric(float64(ckptCPU.Microseconds())/1000/float64(k), "cpu-ms/update")
	b.ReportMetric(float64(floorCPU.Microseconds())/1000/float64(k), "floor-cpu-ms/append")
	b.ReportMetric(float64(ckptFaults)/float64(n*k), "faults/update")
	b.ReportMetric(float64(floorFaults)/float64(n*k), "floor-faults/append")
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
		dir, err := os.MkdirTemp("", "ckpt-appendsync-")
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
