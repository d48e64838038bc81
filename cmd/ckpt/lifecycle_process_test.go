package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tests of the lifecycle commands as real processes: signals, and (in
// lifecycle_torture_test.go) SIGKILL at random moments.

// ckptCmd returns the command `ckpt --store store args…` with a clean
// environment.
func ckptCmd(bin, store string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--store", store}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	return cmd
}

// mustCkpt runs ckpt and fails the test unless it exits 0.
func mustCkpt(tb testing.TB, bin, store string, args ...string) string {
	tb.Helper()
	var out, errOut bytes.Buffer
	cmd := ckptCmd(bin, store, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		tb.Fatalf("ckpt %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// initStore makes a store in a temporary directory.
func initStore(tb testing.TB, bin string) string {
	tb.Helper()
	store := filepath.Join(tb.TempDir(), ".ckpt")
	mustCkpt(tb, bin, store, "init")
	return store
}

// lineReader hands out the lines of a process's output as they come.
type lineReader struct{ lines chan string }

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lr.lines <- sc.Text()
		}
		close(lr.lines)
	}()
	return lr
}

// waitFor reads lines until one contains want, within the timeout, and
// returns the lines read.
func (lr *lineReader) waitFor(t *testing.T, want string, timeout time.Duration) string {
	t.Helper()
	var seen strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-lr.lines:
			if !ok {
				t.Fatalf("output ended before %q:\n%s", want, seen.String())
			}
			seen.WriteString(l + "\n")
			if strings.Contains(l, want) {
				return seen.String()
			}
		case <-deadline:
			t.Fatalf("no %q within %s:\n%s", want, timeout, seen.String())
		}
	}
}

// waitExit waits for cmd and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd, timeout time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("ckpt was killed by %v instead of stopping cleanly", ws.Signal())
			}
			return ee.ExitCode()
		}
		t.Fatalf("waiting for ckpt: %v", err)
	case <-time.After(timeout):
		cmd.Process.Kill()
		t.Fatalf("ckpt did not exit within %s", timeout)
	}
	return -1
}

func TestMonitorStopsCleanlyOnSignals(t *testing.T) {
	bin := ckptBinary(t)
	store := initStore(t, bin)
	mustCkpt(t, bin, store, "start", "a", "--interval", "5m")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := ckptCmd(bin, store, "monitor", "--every", "50ms")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() }) // a failed test leaves no monitor running
			newLineReader(stderr).waitFor(t, "Ctrl-C stops", time.Minute)
			time.Sleep(120 * time.Millisecond) // a few ticks
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, time.Minute); code != 0 {
				t.Errorf("monitor stopped by %v exited %d, want 0", sig, code)
			}
			if out.Len() != 0 {
				t.Errorf("a live checkpoint was reported: %q", out.String())
			}
		})
	}
}

func TestStatusWatchStopsCleanlyOnInterrupt(t *testing.T) {
	bin := ckptBinary(t)
	store := initStore(t, bin)
	mustCkpt(t, bin, store, "start", "kai-7/a", "--agent", "alice")
	cmd := ckptCmd(bin, store, "status", "--watch", "--every", "50ms")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // a failed test leaves no watch running
	// Two frames: the table is redrawn. Off a terminal there are no
	// escape codes.
	lr := newLineReader(stdout)
	seen := lr.waitFor(t, "kai-7/a", time.Minute)
	seen += lr.waitFor(t, "kai-7/a", time.Minute)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, time.Minute); code != 0 {
		t.Errorf("status --watch stopped by SIGINT exited %d, want 0", code)
	}
	if strings.Count(seen, "(Ctrl-C stops)") < 2 || strings.Contains(seen, "\x1b[") {
		t.Errorf("watch output:\n%q", seen)
	}
}
