package testsupport

import (
	"os/exec"
	"runtime"
	"testing"
)

// A missing tool fails a CI run and skips elsewhere; a present one is found.
func TestNeedCommand(t *testing.T) {
	if sh, err := exec.LookPath("sh"); err == nil {
		if got := NeedCommand(t, "sh", "a shell"); got != sh {
			t.Errorf("NeedCommand(sh) = %q, want %q", got, sh)
		}
	}
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		rec := &recorder{TB: t}
		done := make(chan struct{})
		go func() { // Fatal and Skip end only this goroutine
			defer close(done)
			NeedCommand(rec, "ckpt-no-such-tool", "a test")
		}()
		<-done
		if rec.failed != (ci == "true") || rec.skipped != (ci != "true") {
			t.Errorf("CI=%q: failed %v, skipped %v", ci, rec.failed, rec.skipped)
		}
	}
}

// recorder notes a failure or a skip instead of ending the test.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()      {}
func (r *recorder) Fatal(...any) { r.failed = true; runtime.Goexit() }
func (r *recorder) Skip(...any)  { r.skipped = true; runtime.Goexit() }
