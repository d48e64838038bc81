package gitignore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEnsure: outside a repository nothing is done; inside one the store's
// line is reported missing, added only when asked (once, after the lines
// there, with a newline the file lacked), and then found.
func TestEnsure(t *testing.T) {
	base := t.TempDir()
	if r, err := Ensure(filepath.Join(base, ".ckpt"), true); err != nil || r.State != NoRepo || r.Root != "" {
		t.Fatalf("outside a repository: %+v, %v", r, err)
	}
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	gi := filepath.Join(repo, ".gitignore")
	if err := os.WriteFile(gi, []byte("node_modules/"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(repo, "sub", ".ckpt")
	r, err := Ensure(store, false)
	if err != nil || r.State != NotIgnored || r.Root != repo || r.Line != "/sub/.ckpt/" || r.File != gi {
		t.Fatalf("not asked to add: %+v, %v", r, err)
	}
	if b, _ := os.ReadFile(gi); string(b) != "node_modules/" {
		t.Fatalf("Ensure without add changed .gitignore: %q", b)
	}
	if r, err = Ensure(store, true); err != nil || r.State != Added {
		t.Fatalf("asked to add: %+v, %v", r, err)
	}
	if r, err = Ensure(store, true); err != nil || r.State != AlreadyIgnored {
		t.Fatalf("added already: %+v, %v", r, err)
	}
	if b, _ := os.ReadFile(gi); string(b) != "node_modules/\n/sub/.ckpt/\n" {
		t.Errorf(".gitignore after adding: %q", b)
	}
	// "x", "x/" and "/x" ignore the directory as well as "/x/".
	if err := os.WriteFile(gi, []byte("other\n.ckpt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err = Ensure(filepath.Join(repo, ".ckpt"), false); err != nil || r.State != AlreadyIgnored {
		t.Errorf("a bare line: %+v, %v", r, err)
	}
}
