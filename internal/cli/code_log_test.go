package cli

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/autockpt"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/testsupport"
)

// TestResumeSaysWhatChangedInTheCode: the continuation prompt of resume
// and takeover says what moved in the new session's code since the last
// session recorded it, or that the new session is not in that repository.
func TestResumeSaysWhatChangedInTheCode(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "a", "--title", "A")
	repo := testsupport.DivergedRepo(t)
	recordCode(h, "a", repo)
	c := h.Get("a")
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
	if out := h.OK("takeover", "a", "--agent", "b"); !strings.Contains(out, "This session is not in that repository") {
		t.Errorf("takeover:\n%s", out)
	}
}

// recordCode records where the code in repo is on checkpoint id, as a
// hook's final checkpoint and ckpt-server's checkpoint do
// (autockpt.RecordCode).
func recordCode(h *clitest.Harness, id, repo string) {
	h.T.Helper()
	autockpt.RecordCode(context.Background(), io.Discard, h.Store, h.Get(id), repo, h.Now)
	if h.Get(id).Code == nil {
		h.T.Fatalf("no code state recorded on %s from %s", id, repo)
	}
}
