package render

import (
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestCodeLineAndSince(t *testing.T) {
	was := &ckpt.CodeState{Root: "/home/u/app", Host: "a", Branch: "main", Head: "1a2b3c4d5e6f7a8b9c0d", Upstream: "origin/main", Ahead: 2, Uncommitted: 3}
	if got, want := CodeLine(was), "branch main at 1a2b3c4d5e6f (origin/main, 2 ahead), 3 files uncommitted, in /home/u/app on a"; got != want {
		t.Errorf("CodeLine = %q\nwant %q", got, want)
	}
	if got := CodeLine(&ckpt.CodeState{Root: "/r"}); got != "detached HEAD (no commit yet), 0 files uncommitted, in /r" {
		t.Errorf("CodeLine of an empty repository = %q", got)
	}
	same := *was
	if got := CodeSince(was, &same, 0); got != "" {
		t.Errorf("CodeSince with no change = %q", got)
	}
	moved := *was
	moved.Branch, moved.Head, moved.Uncommitted = "fix", "ffff0000ffff0000", 1
	got := CodeSince(was, &moved, 4)
	for _, want := range []string{"The last session left the code on branch main at 1a2b3c4d5e6f", "a different branch is checked out (fix)", "HEAD moved 4 commits forward (now ffff0000ffff)", "1 file is uncommitted now"} {
		if !strings.Contains(got, want) {
			t.Errorf("CodeSince = %q, missing %q", got, want)
		}
	}
	if got := CodeSince(was, &moved, -1); !strings.Contains(got, "not a descendant of 1a2b3c4d5e6f") {
		t.Errorf("CodeSince across a rewrite = %q", got)
	}
	other := &ckpt.CodeState{Root: "/srv/app", Host: "b"}
	if got := CodeSince(was, other, 0); !strings.Contains(got, "This session runs in /srv/app on b: fetch and check out branch main at 1a2b3c4d5e6f there first.") {
		t.Errorf("CodeSince on another host = %q", got)
	}
	if got := CodeSince(was, nil, 0); !strings.Contains(got, "not in that repository") {
		t.Errorf("CodeSince outside a repository = %q", got)
	}
	c := &ckpt.Checkpoint{ID: "a", Code: was}
	if md := NewPrompt(c).Markdown(); !strings.Contains(md, "- **Code:** branch main at 1a2b3c4d5e6f") {
		t.Errorf("prompt lacks the code line:\n%s", md)
	}
}
