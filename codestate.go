package ckpt

import (
	"fmt"
	"time"
)

// EventCode records where the checkpoint's code is (payload CodeState). The
// hooks write one at session start and end, at the end of a turn and on a
// subagent's step when the code moved, and `ckpt checkpoint` writes one, so
// a session resumed or taken over elsewhere knows what to fetch and check
// out first.
const EventCode EventType = "code"

// CodeState is where a checkpoint's code was at a moment: the git
// repository, its branch and commit, the upstream and how many files were
// uncommitted. It is read cheaply (git status, no index writes) and is
// absent when the work is not in a git repository.
type CodeState struct {
	// Root is the repository's top directory on Host.
	Root string `json:"root"`
	Host string `json:"host,omitempty"`
	// Branch is the checked-out branch, "" for a detached HEAD.
	Branch string `json:"branch,omitempty"`
	// Head is the commit checked out, "" in a repository with no commit.
	Head string `json:"head,omitempty"`
	// Upstream is the branch's upstream (origin/main), Ahead and Behind
	// the commits between them.
	Upstream string `json:"upstream,omitempty"`
	Ahead    int    `json:"ahead,omitempty"`
	Behind   int    `json:"behind,omitempty"`
	// Uncommitted counts tracked files with changes (staged or not,
	// conflicts included); Untracked the files git does not track.
	Uncommitted int       `json:"uncommitted"`
	Untracked   int       `json:"untracked,omitempty"`
	At          time.Time `json:"at"`
}

// SameCode reports whether a and b describe the same place: everything but
// the time and the untracked count (build outputs and scratch files come
// and go; recording each would grow the history for nothing).
func SameCode(a, b *CodeState) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.At, y.At = time.Time{}, time.Time{}
	x.Untracked, y.Untracked = 0, 0
	return x == y
}

// applyCode folds an EventCode: the latest code state replaces the last.
func applyCode(c *Checkpoint, e Event) error {
	var cs CodeState
	if err := decode(e, &cs); err != nil {
		return err
	}
	if cs.Root == "" {
		return fmt.Errorf("%w: a code state needs the repository's root", ErrInvalid)
	}
	if cs.Uncommitted < 0 || cs.Untracked < 0 || cs.Ahead < 0 || cs.Behind < 0 {
		return fmt.Errorf("%w: a code state's counts cannot be negative", ErrInvalid)
	}
	if cs.At.IsZero() {
		cs.At = e.At.UTC()
	}
	c.Code = &cs
	return nil
}
