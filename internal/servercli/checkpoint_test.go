package servercli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/testsupport"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

// TestCheckpointRecordsCodeState: ckpt checkpoint records where the code
// is; show and log say it, and a second checkpoint with nothing moved
// records nothing.
func TestCheckpointRecordsCodeState(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "a", "--title", "A")
	repo := testsupport.DivergedRepo(t)
	h.OK("checkpoint", "a", "--profile", "auto", "--dir", repo)
	c := h.Get("a")
	if c.Code == nil || c.Code.Root != repo || c.Code.Branch != "main" || c.Code.Upstream != "origin/main" ||
		c.Code.Ahead != 1 || c.Code.Behind != 1 || c.Code.Uncommitted != 1 {
		t.Fatalf("recorded code %+v", c.Code)
	}
	rev := c.Rev
	h.OK("checkpoint", "a", "--profile", "auto", "--dir", repo)
	if got := h.Get("a").Rev; got != rev {
		t.Errorf("a checkpoint with the code where it was appended: rev %d → %d", rev, got)
	}
	if out := h.OK("show", "a"); !strings.Contains(out, "code         branch main at ") || !strings.Contains(out, "(origin/main, 1 ahead, 1 behind), 1 file uncommitted") {
		t.Errorf("show:\n%s", out)
	}
	if out := h.OK("log", "a"); !strings.Contains(out, "code at branch main at ") {
		t.Errorf("log:\n%s", out)
	}
}

// TestCheckpointJSON: --json prints the report as JSON on stdout and the
// steps' lines on stderr; --tracker-only (what the hooks' final checkpoint
// runs in ckpt-server) runs step 3 alone, writing no progress file.
func TestCheckpointJSON(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "a", "--title", "A")
	dir := t.TempDir()
	h.Dir = dir
	code, out, errOut := h.Run("checkpoint", "a", "--profile", "auto", "--json")
	var r struct {
		Profile string `json:"profile"`
		Steps   []struct {
			Name, Skipped, Failed string
		} `json:"steps"`
		Succeeded, Total int
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("checkpoint --json: exit %d, stdout not a report:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if r.Profile != "auto" || r.Total != 2 || r.Succeeded != 2 || len(r.Steps) != 2 || r.Steps[0].Name != "Progress file" ||
		r.Steps[1].Skipped != "Issue-tracker update skipped — no issue tracker configured." {
		t.Errorf("report %+v", r)
	}
	if !strings.Contains(errOut, "Progress saved to .ccc-progress.md.\n") || !strings.Contains(errOut, "Checkpoint complete: 2/2 steps succeeded.\n") {
		t.Errorf("the steps' lines are not on stderr:\n%s", errOut)
	}
	progress := filepath.Join(dir, ccc.ProgressFile)
	if err := os.Remove(progress); err != nil {
		t.Fatal(err)
	}
	out = h.OK("checkpoint", "a", "--profile", "auto", "--json", "--tracker-only")
	if json.Unmarshal([]byte(out), &r) != nil || r.Total != 1 || len(r.Steps) != 1 || r.Steps[0].Name != "Issue tracker" {
		t.Errorf("--tracker-only report:\n%s", out)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Errorf("--tracker-only wrote %s (%v)", ccc.ProgressFile, err)
	}
}
