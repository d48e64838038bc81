package testsupport

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Git runs git with args in dir and returns its combined output; a failure
// fails the test with that output. It runs hermetically: a fixed author and
// committer, and neither the user's nor the system's git configuration, so
// that a test makes the same commits on every machine.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), GitEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// GitEnv is the environment Git adds: a test that runs git its own way (a
// command under test that commits) adds it too.
var GitEnv = []string{
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
}

// DivergedRepo returns a clone one commit ahead of and one behind its
// upstream, with a file changed: a code state with every field set.
func DivergedRepo(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	origin, repo := filepath.Join(base, "origin"), filepath.Join(base, "work")
	Git(t, base, "init", "-q", "-b", "main", origin)
	if err := os.WriteFile(filepath.Join(origin, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, origin, "add", "a.txt")
	Git(t, origin, "commit", "-q", "-m", "a")
	Git(t, base, "clone", "-q", origin, repo)
	Git(t, origin, "commit", "-q", "--allow-empty", "-m", "upstream")
	Git(t, repo, "commit", "-q", "--allow-empty", "-m", "local")
	Git(t, repo, "fetch", "-q")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return repo
}
