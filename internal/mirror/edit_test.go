package mirror

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestEntryForAddRemove(t *testing.T) {
	project := t.TempDir()
	l := ForStoreDir(filepath.Join(project, ".ckpt"))
	if err := os.Mkdir(filepath.Join(project, ".ckpt"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(project, "sub")
	e, err := l.EntryFor(Spec{Format: "ccc", Root: "docs", WorkDir: work, ID: "a"})
	if err != nil || e.Root != filepath.Join("sub", "docs") || e.ID != "a" {
		t.Fatalf("a root inside the project: %v %+v", err, e)
	}
	if _, err := l.EntryFor(Spec{Format: "ccc", Root: "../../x", WorkDir: work, RootName: "--root"}); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "--root ../../x climbs out of the project") {
		t.Fatalf("a root that climbs out: %v", err)
	}
	if _, err := l.EntryFor(Spec{Format: "nope", WorkDir: work}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("an unknown format: %v", err)
	}
	if err := l.CheckRoot(e, "root"); err != nil {
		t.Fatalf("a root not made yet: %v", err)
	}
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "docs"), nil, 0o644)
	if err := l.CheckRoot(e, "root"); !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), "is a file") {
		t.Fatalf("a root that is a file: %v", err)
	}
	if err := l.Add(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Add(e); !errors.Is(err, ckpt.ErrExists) {
		t.Fatalf("the same mirror again: %v", err)
	}
	if cfg, err := l.Read(); err != nil || len(cfg.Mirrors) != 1 || cfg.Mirrors[0] != e {
		t.Fatalf("the list: %v %+v", err, cfg)
	}
	if err := l.Remove(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Remove(e); !errors.Is(err, ckpt.ErrNotFound) {
		t.Fatalf("a mirror not listed: %v", err)
	}
}

// TestLocate: the list a client uses is the named file, else the local
// store's own, else the project's file in the working directory.
func TestLocate(t *testing.T) {
	for _, c := range []struct {
		file, storeDir string
		want           List
	}{
		{"lists/m.json", "/p/.ckpt", List{File: "/w/lists/m.json", Project: "/w/lists"}},
		{"/etc/m.json", "", List{File: "/etc/m.json", Project: "/etc"}},
		{"", "/p/.ckpt", List{File: "/p/.ckpt/mirrors.json", Project: "/p"}},
		{"", "", List{File: "/w/.ckpt-mirrors.json", Project: "/w"}},
	} {
		if got := Locate(c.file, "/w", c.storeDir); got != c.want {
			t.Errorf("Locate(%q, /w, %q) = %+v, want %+v", c.file, c.storeDir, got, c.want)
		}
	}
}
