package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkProcessUpdateRemote runs `ckpt update` as a whole process in
// both places in one run: against the local store (the floor), then
// against a `ckpt serve` of that store on loopback with CKPT_STORE and
// CKPT_TOKEN. It reports the remote median's ratio to the local one
// ("x-local"; target: within 1.5).
func BenchmarkProcessUpdateRemote(b *testing.B) {
	bin := ckptBinary(b)
	dir := b.TempDir()
	store := filepath.Join(dir, ".ckpt")
	if _, err := ckptRun(b, bin, "--store", store, "init"); err != nil {
		b.Fatal(err)
	}
	if _, err := ckptRun(b, bin, "--store", store, "start", "kai-7/secondary-a", "--step", "research", "--step", "spec"); err != nil {
		b.Fatal(err)
	}
	update := func(env []string, i int) error {
		cmd := exec.Command(bin, "update", "kai-7/secondary-a", "--stage", "S2.P2",
			"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")
		cmd.Dir = dir
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("ckpt update: %v: %s", err, out)
		}
		return nil
	}
	i := 0
	b.Run("local", func(b *testing.B) {
		timeLoop(b, "update-local", func() error { i++; return update(nil, i) })
	})
	srv := startServe(b, bin, store, "127.0.0.1:0")
	b.Run("remote", func(b *testing.B) {
		med := timeLoop(b, "update-remote", func() error {
			i++
			return update([]string{"CKPT_STORE=" + srv.url, "CKPT_TOKEN=" + srv.admin}, i)
		})
		if local, ok := medians["update-local"]; ok {
			b.ReportMetric(float64(med)/float64(local), "x-local")
		}
	})
}
