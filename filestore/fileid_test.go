//go:build unix

package filestore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFileIDIsStat: the identity an append checks without reading times
// (idIn, idOf, idFollow) names the same device, inode, type and size as
// lstat, fstat and stat, so a kept descriptor (whose device and inode came
// from fstat) is recognised, and a link is seen as a link, not followed;
// by statx and by the fstatat it falls back on.
func TestFileIDIsStat(t *testing.T) {
	t.Run("statx", testFileIDIsStat)
	if hasStatx {
		t.Run("fstatat", func(t *testing.T) {
			statxFallback(t)
			testFileIDIsStat(t)
		})
	}
}

func testFileIDIsStat(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "history.jsonl")
	if err := os.WriteFile(file, []byte("{\"seq\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(file, &st); err != nil {
		t.Fatal(err)
	}
	want := fileID{dev: uint64(st.Dev), ino: st.Ino, regular: true, size: st.Size}
	dfd, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(dfd)
	fd, err := openFile(file, syscall.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	for name, get := range map[string]func() (fileID, error){
		"idIn by path":      func() (fileID, error) { return idIn(-1, file) },
		"idIn through dir":  func() (fileID, error) { return idIn(dfd, file) },
		"idOf":              func() (fileID, error) { return idOf(fd, file) },
		"idFollow the link": func() (fileID, error) { return idFollow(link) },
	} {
		if got, err := get(); err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v (lstat)", name, got, err, want)
		}
	}
	if got, err := idIn(dfd, link); err != nil || got.regular || got.ino == want.ino {
		t.Errorf("idIn of a link: %+v, %v; want the link itself, not a regular file", got, err)
	}
	if got, err := idIn(-1, dir); err != nil || !got.dir || got.regular {
		t.Errorf("idIn of a directory: %+v, %v; want a directory", got, err)
	}
	if _, err := idIn(dfd, filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("idIn of a missing file: %v; want a not-exist error", err)
	}
}
