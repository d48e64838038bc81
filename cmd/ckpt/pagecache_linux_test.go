package main

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// evictFromPageCache drops the cached pages of the files at paths, so that
// the next exec of each reads it back from disk: every binary a benchmark
// compares is then in the page cache the same way, as after a reboot. A
// binary just written stays in the page cache as it was written: by the
// linker's mmap (a fresh go build) or by write (a copy, such as the go
// command's from its cache), and on Linux 6.18 (ext4) the same ckpt
// binary started with 0.73x the CPU time as a copy than as the linker
// wrote it, hello-world 0.86x (docs/design.md, start-up round four).
func evictFromPageCache(tb testing.TB, paths ...string) {
	tb.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		err = f.Sync()
		if err == nil {
			err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		}
		f.Close()
		if err != nil {
			tb.Fatalf("dropping %s from the page cache: %v", p, err)
		}
	}
}
