package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var writers = []struct {
	name  string
	write func(string, []byte, os.FileMode) error
	// gaps: a reader may find no file while a write is under way.
	gaps bool
}{
	{"WriteFile", WriteFile, false},
	{"ReplaceFile", ReplaceFile, false},
	{"ReplaceCache", ReplaceCache, true},
}

// entries lists dir's names, so a test can see a leftover temporary file.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := w.write(path, []byte("first"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := w.write(path, []byte("second, longer"), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "second, longer" {
				t.Errorf("content = %q, want the second write", got)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
			}
			if names := entries(t, dir); len(names) != 1 || names[0] != "state.json" {
				t.Errorf("directory holds %v, want only state.json", names)
			}
		})
	}
}

func TestWriteRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := WriteFile("plain", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "plain")); string(got) != "x" {
		t.Errorf("content = %q, want x", got)
	}
}

func TestWriteMissingDirectoryFails(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			err := w.write(filepath.Join(dir, "nope", "f"), []byte("x"), 0o644)
			if err == nil {
				t.Fatal("writing into a missing directory succeeded")
			}
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %v does not say the directory is missing", err)
			}
			if names := entries(t, dir); len(names) != 0 {
				t.Errorf("directory holds %v after a failed write, want nothing", names)
			}
		})
	}
}

func TestWriteRenameFailureLeavesNoTemp(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			// A non-empty directory at path makes the rename fail after the
			// temporary file was written.
			path := filepath.Join(dir, "target")
			if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
				t.Fatal(err)
			}
			err := w.write(path, []byte("data"), 0o644)
			if err == nil {
				t.Fatal("renaming over a non-empty directory succeeded")
			}
			if names := entries(t, dir); len(names) != 1 || names[0] != "target" {
				t.Errorf("directory holds %v after a failed rename, want only target", names)
			}
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				t.Errorf("the existing directory at path was disturbed: %v", err)
			}
		})
	}
}

// TestConcurrentWritersAndReaders checks atomicity: a reader sees one whole
// version or another, never a mix or an empty file (and, for ReplaceCache
// only, sometimes no file).
func TestConcurrentWritersAndReaders(t *testing.T) {
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			version := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("v%03d;", i)), 2000) }
			if err := w.write(path, version(0), 0o644); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Go(func() {
					for i := 1; i <= 25; i++ {
						if err := w.write(path, version(g*100+i), 0o644); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			done := make(chan struct{})
			var readErr error
			go func() {
				defer close(done)
				for range 500 {
					got, err := os.ReadFile(path)
					if w.gaps && errors.Is(err, fs.ErrNotExist) {
						continue
					}
					if err != nil {
						readErr = err
						return
					}
					var n int
					if _, err := fmt.Sscanf(string(got), "v%03d;", &n); err != nil || !bytes.Equal(got, version(n)) {
						readErr = fmt.Errorf("read a mixed or partial file of %d bytes", len(got))
						return
					}
				}
			}()
			wg.Wait()
			<-done
			if readErr != nil {
				t.Fatal(readErr)
			}
			if names := entries(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only f", names)
			}
		})
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("syncing a missing directory succeeded")
	}
}
