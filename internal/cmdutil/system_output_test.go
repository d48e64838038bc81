//go:build unix

package cmdutil

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestOutputOf: a child's standard output comes back, and its failure
// carries the last line of its standard error, which is how a hook reports
// why ckpt-server did not run its tracker step.
func TestOutputOf(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := outputOf(context.Background(), sh, []string{sh, "-c", `echo "$X"; echo warming >&2`}, []string{"X=report"})
	if err != nil || string(out) != "report\n" {
		t.Fatalf("a child that succeeded: %q, %v", out, err)
	}
	out, err = outputOf(context.Background(), sh, []string{sh, "-c", "echo partial; printf 'first\\nckpt: no such checkpoint\\n\\n' >&2; exit 3"}, nil)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.HasSuffix(err.Error(), ": ckpt: no such checkpoint") || string(out) != "partial\n" {
		t.Fatalf("a child that failed: %q, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := outputOf(ctx, sh, []string{sh, "-c", "sleep 60"}, nil); err == nil {
		t.Fatal("a child under an ended context ran to completion")
	}
}
