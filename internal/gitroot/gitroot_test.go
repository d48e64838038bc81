package gitroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: a .git directory or file (a worktree's) marks the root, found
// from below it; outside any repository, and for "", there is none.
func TestFind(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "a", "b")
	worktree := filepath.Join(base, "wt")
	for _, d := range []string{filepath.Join(repo, ".git"), deep, worktree} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: ../repo/.git/worktrees/wt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{deep, repo}, {repo, repo}, {deep + "/../b/", repo}, {worktree, worktree}, {"", ""},
	} {
		if got := Find(c.dir); got != c.want {
			t.Errorf("Find(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
	// base itself may sit inside a repository (a checkout's temp dir): only
	// check there is no root below it.
	if got := Find(base); got != "" && len(got) >= len(base) {
		t.Errorf("Find(%q) = %q: no .git there", base, got)
	}
}

// TestFindMovedFromClaude is claude's former FindRepoRoot test: no
// repository, then a worktree's .git file.
func TestFindMovedFromClaude(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(dir, "repo", "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Find(deep); got != "" && strings.HasPrefix(got, dir) {
		t.Fatalf("no repository yet, got %s", got)
	}
	// A worktree's .git is a file.
	if err := os.WriteFile(filepath.Join(dir, "repo", ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Find(deep); got != filepath.Join(dir, "repo") {
		t.Fatalf("findRepoRoot = %q", got)
	}
	if Find("") != "" {
		t.Fatal("an empty start has no repository")
	}
}
