package testsupport

import (
	"testing"
)

// TestGitIsHermetic: a commit needs no identity from the machine, and
// records the fixed one.
func TestGitIsHermetic(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", t.TempDir()) // no ~/.gitconfig either way
	Git(t, dir, "init", "-q")
	Git(t, dir, "commit", "-q", "--allow-empty", "-m", "first")
	if got := Git(t, dir, "log", "-1", "--format=%an <%ae> %s"); got != "t <t@example.com> first\n" {
		t.Errorf("log: %q", got)
	}
}
