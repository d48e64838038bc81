package testsupport

import (
	"os"
	"os/exec"
	"testing"
)

// NeedCommand returns the path of the command name. When the machine lacks
// it the test is skipped, saying why, except in CI (CI=true), where .ci/run
// installs every tool the tests use and a missing one must fail the run
// rather than pass it with the test unrun.
func NeedCommand(t testing.TB, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " is not installed (" + why + "); .ci/run installs it"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
