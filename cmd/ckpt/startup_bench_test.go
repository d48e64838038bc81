package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkStartup measures whole ckpt processes against a floor built and
// measured in the same run: a hello-world Go binary. Each iteration runs
// every case once, in turn, so that the load of a shared machine weighs on
// all of them alike; the benchmark reports each case's median ("NAME-ms")
// and its ratio to the floor's ("NAME-x"). The binaries are built as the
// README installs them (CGO_ENABLED=0).
//
// The hot path (update, beat, step) should stay within 2.5x of the floor;
// update and step include a durable append (lock, fsync, state replace),
// beat only a liveness write. serve-help is `ckpt serve --help`: ckpt
// replacing itself with ckpt-server, the cost of the exec hop plus the
// full binary's start; server-version is `ckpt-server version`, what every
// command cost before the two binaries.
//
//	go test -run '^$' -bench Startup -benchtime 200x ./cmd/ckpt
func BenchmarkStartup(b *testing.B) {
	hello := helloBinary(b)
	bin := ckptBinary(b)
	server := filepath.Join(filepath.Dir(bin), "ckpt-server")
	dir := b.TempDir()
	store := filepath.Join(dir, ".ckpt")
	if _, err := ckptRun(b, bin, "--store", store, "init"); err != nil {
		b.Fatal(err)
	}
	if _, err := ckptRun(b, bin, "--store", store, "start", "kai-7/secondary-a", "--step", "research", "--step", "spec"); err != nil {
		b.Fatal(err)
	}
	run := func(path string, args ...string) func() error {
		return func() error {
			cmd := exec.Command(path, args...)
			cmd.Dir = dir // ckpt finds the store here, like git
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("%s %v: %v: %s", filepath.Base(path), args, err, out)
			}
			return nil
		}
	}
	i := 0
	cases := []struct {
		name string
		fn   func() error
	}{
		{"hello", run(hello)},
		{"version", run(bin, "version")},
		{"help", run(bin, "--help")},
		{"beat", run(bin, "beat", "kai-7/secondary-a")},
		{"update", func() error {
			return run(bin, "update", "kai-7/secondary-a", "--stage", "S2.P2",
				"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")()
		}},
		{"step", func() error {
			return run(bin, "step", "kai-7/secondary-a", "research", "--notes", fmt.Sprint("pass ", i))()
		}},
		{"serve-help", run(bin, "serve", "--help")},
		{"server-version", run(server, "version")},
	}
	times := make([][]time.Duration, len(cases))
	for b.Loop() {
		i++
		for k := range cases {
			c := (k + i) % len(cases) // each case first in turn
			t := time.Now()
			if err := cases[c].fn(); err != nil {
				b.Fatal(err)
			}
			times[c] = append(times[c], time.Since(t))
		}
	}
	floor := median(times[0])
	for k, c := range cases {
		med := median(times[k])
		medians["startup-"+c.name] = med
		b.ReportMetric(float64(med.Microseconds())/1000, c.name+"-ms")
		if k > 0 {
			b.ReportMetric(float64(med)/float64(floor), c.name+"-x")
		}
	}
}

// median is the median of ts, which it sorts.
func median(ts []time.Duration) time.Duration {
	slices.Sort(ts)
	return ts[len(ts)/2]
}

var (
	helloOnce sync.Once
	helloPath string
	helloErr  error
)

// helloBinary builds a hello-world Go program with the same toolchain as
// ckpt, once per test process, and returns its path: the floor of a Go
// process's cost on this machine.
func helloBinary(tb testing.TB) string {
	tb.Helper()
	helloOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ckpt-hello-")
		if err != nil {
			helloErr = err
			return
		}
		src := filepath.Join(dir, "hello.go")
		err = os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello, world\") }\n"), 0o644)
		if err != nil {
			helloErr = err
			return
		}
		helloPath = filepath.Join(dir, "hello")
		// go test puts the go command that runs it first on PATH.
		goTool := "go"
		cmd := exec.Command(goTool, "build", "-o", helloPath, src)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GO111MODULE=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			helloErr = fmt.Errorf("go build hello.go: %v\n%s", err, out)
		}
	})
	if helloErr != nil {
		tb.Fatalf("building the hello-world floor: %v", helloErr)
	}
	return helloPath
}
