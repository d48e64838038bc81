package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
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

// TestResumeSaysWhatChangedInTheCode: the continuation prompt of resume
// and takeover says what moved in the new session's code since the last
// session recorded it, or that the new session is not in that repository.
func TestResumeSaysWhatChangedInTheCode(t *testing.T) {
	h := newHarness(t)
	h.ok("start", "a", "--title", "A")
	repo := divergedRepo(t)
	h.ok("checkpoint", "a", "--profile", "auto", "--dir", repo)
	c := h.get("a")
	testsupport.Git(t, repo, "commit", "-q", "-am", "more")
	ctx := context.Background()
	out := withCodeSince(ctx, render.NewContinuation(c, ""), repo)
	md := out.Markdown()
	for _, want := range []string{"The last session left the code on branch main at ", "HEAD moved 1 commit forward", "0 files are uncommitted now"} {
		if !strings.Contains(md, want) {
			t.Errorf("prompt lacks %q:\n%s", want, md)
		}
	}
	elsewhere := withCodeSince(ctx, render.NewContinuation(c, ""), t.TempDir()).Markdown()
	if !strings.Contains(elsewhere, "This session is not in that repository: fetch it and check out branch main at ") {
		t.Errorf("prompt outside the repository:\n%s", elsewhere)
	}
	// The commands: the prompt printed by takeover says it too (the
	// harness's work directory is outside the repository).
	if out := h.ok("takeover", "a", "--agent", "b"); !strings.Contains(out, "This session is not in that repository") {
		t.Errorf("takeover:\n%s", out)
	}
}
