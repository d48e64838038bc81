package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Helpers for tests and benchmarks that run the real ckpt binary as separate
// processes.

var (
	buildOnce sync.Once
	builtPath string
	buildErr  error
)

// ckptBinary builds ./cmd/ckpt and ./cmd/ckpt-server into one directory,
// once per test process, as the README installs them (static, cgo off),
// and returns the path of ckpt: its dispatcher finds ckpt-server beside it.
func ckptBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := buildDir("ckpt-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtPath = filepath.Join(dir, "ckpt")
		// go test puts the go command that runs it first on PATH.
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../ckpt-server", "../ckpt-pg")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatalf("building ckpt: %v", buildErr)
	}
	return builtPath
}

// ckptRun runs the binary with a clean environment and returns stdout.
func ckptRun(tb testing.TB, bin string, args ...string) (string, error) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("ckpt %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), err
}

// newProcessStore creates a store in a temporary directory and returns its path.
func newProcessStore(tb testing.TB, bin string) string {
	tb.Helper()
	store := filepath.Join(tb.TempDir(), ".ckpt")
	if _, err := ckptRun(tb, bin, "--store", store, "init"); err != nil {
		tb.Fatal(err)
	}
	return store
}
