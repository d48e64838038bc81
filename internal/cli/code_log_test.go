package cli

import (
	"strings"
	"testing"
)

// TestCheckpointRecordsCodeState: ckpt checkpoint records where the code
// is; show and log say it, and a second checkpoint with nothing moved
// records nothing.
func TestCheckpointRecordsCodeState(t *testing.T) {
	h := newHarness(t)
	h.ok("start", "a", "--title", "A")
	repo := divergedRepo(t)
	h.ok("checkpoint", "a", "--profile", "auto", "--dir", repo)
	c := h.get("a")
	if c.Code == nil || c.Code.Root != repo || c.Code.Branch != "main" || c.Code.Upstream != "origin/main" ||
		c.Code.Ahead != 1 || c.Code.Behind != 1 || c.Code.Uncommitted != 1 {
		t.Fatalf("recorded code %+v", c.Code)
	}
	rev := c.Rev
	h.ok("checkpoint", "a", "--profile", "auto", "--dir", repo)
	if got := h.get("a").Rev; got != rev {
		t.Errorf("a checkpoint with the code where it was appended: rev %d → %d", rev, got)
	}
	if out := h.ok("show", "a"); !strings.Contains(out, "code         branch main at ") || !strings.Contains(out, "(origin/main, 1 ahead, 1 behind), 1 file uncommitted") {
		t.Errorf("show:\n%s", out)
	}
	if out := h.ok("log", "a"); !strings.Contains(out, "code at branch main at ") {
		t.Errorf("log:\n%s", out)
	}
}
