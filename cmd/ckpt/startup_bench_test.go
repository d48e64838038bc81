package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// BenchmarkStartup measures whole ckpt processes against a floor built and
// measured in the same run: a hello-world Go binary. Each sub-benchmark
// reports its median ("ms-median") and, after the floor, its ratio to it
// ("x-hello"). The hot path (update, beat, step) should stay within 2.5x of
// the floor; update and step include a durable append (lock, fsync, state
// replace), beat only a liveness write.
//
//	go test -run '^$' -bench Startup -benchtime 300x ./cmd/ckpt
func BenchmarkStartup(b *testing.B) {
	hello := helloBinary(b)
	bin := ckptBinary(b)
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
			i++
			return run(bin, "update", "kai-7/secondary-a", "--stage", "S2.P2",
				"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")()
		}},
		{"step", func() error {
			i++
			return run(bin, "step", "kai-7/secondary-a", "research", "--notes", fmt.Sprint("pass ", i))()
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			med := timeLoop(b, "startup-"+c.name, c.fn)
			if floor := medians["startup-hello"]; c.name != "hello" && floor > 0 {
				b.ReportMetric(float64(med)/float64(floor), "x-hello")
			}
		})
	}
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
