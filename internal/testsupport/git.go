package testsupport

import (
	"os"
	"os/exec"
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
