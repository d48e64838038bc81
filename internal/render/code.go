package render

import (
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// CodeLine says where the code was in a recorded code state: "branch main
// at 1a2b3c4d5e6f (origin/main, 2 ahead), 3 files uncommitted, in
// /home/u/app on host-a". "" for nil.
func CodeLine(cs *ckpt.CodeState) string {
	if cs == nil {
		return ""
	}
	var b strings.Builder
	if cs.Branch != "" {
		b.WriteString("branch " + cs.Branch)
	} else {
		b.WriteString("detached HEAD")
	}
	if cs.Head != "" {
		b.WriteString(" at " + shortHash(cs.Head))
	} else {
		b.WriteString(" (no commit yet)")
	}
	if cs.Upstream != "" {
		var ab []string
		if cs.Ahead > 0 {
			ab = append(ab, fmt.Sprintf("%d ahead", cs.Ahead))
		}
		if cs.Behind > 0 {
			ab = append(ab, fmt.Sprintf("%d behind", cs.Behind))
		}
		if len(ab) == 0 {
			ab = append(ab, "up to date")
		}
		fmt.Fprintf(&b, " (%s, %s)", cs.Upstream, strings.Join(ab, ", "))
	}
	fmt.Fprintf(&b, ", %s uncommitted", Plural(cs.Uncommitted, "file", "files"))
	if cs.Untracked > 0 {
		fmt.Fprintf(&b, ", %s untracked", Plural(cs.Untracked, "file", "files"))
	}
	b.WriteString(", in " + cs.Root)
	if cs.Host != "" {
		b.WriteString(" on " + cs.Host)
	}
	return clip(b.String(), itemMax)
}

// CodeSince says what changed between the code state the last session
// recorded (was) and the code now, for a resumed session: another machine
// or directory (fetch and check out the branch first), another branch, the
// branch moved N commits (moved < 0: moved to a commit that does not
// descend from the recorded one), files uncommitted now. "" when nothing
// changed or nothing was recorded.
func CodeSince(was, now *ckpt.CodeState, moved int) string {
	if was == nil {
		return ""
	}
	left := "The last session left the code on " + CodeLine(was) + "."
	if now == nil {
		return left + " This session is not in that repository: fetch it and check out " + target(was) + " first."
	}
	if now.Host != was.Host || now.Root != was.Root {
		return left + " This session runs in " + now.Root + onHost(now.Host) + ": fetch and check out " + target(was) + " there first."
	}
	var changes []string
	if now.Branch != was.Branch {
		changes = append(changes, "a different branch is checked out ("+branchName(now)+")")
	}
	switch {
	case moved > 0:
		changes = append(changes, fmt.Sprintf("HEAD moved %s forward (now %s)", Plural(moved, "commit", "commits"), shortHash(now.Head)))
	case moved < 0:
		changes = append(changes, "HEAD is now "+shortHash(now.Head)+", not a descendant of "+shortHash(was.Head))
	}
	if now.Uncommitted != was.Uncommitted {
		changes = append(changes, Plural(now.Uncommitted, "file is", "files are")+" uncommitted now")
	}
	if len(changes) == 0 {
		return ""
	}
	return left + " Since then " + strings.Join(changes, "; ") + "."
}

func target(cs *ckpt.CodeState) string {
	if cs.Head == "" {
		return branchName(cs)
	}
	if cs.Branch == "" {
		return "commit " + shortHash(cs.Head)
	}
	return "branch " + cs.Branch + " at " + shortHash(cs.Head)
}

func branchName(cs *ckpt.CodeState) string {
	if cs.Branch == "" {
		return "detached HEAD"
	}
	return cs.Branch
}

func onHost(h string) string {
	if h == "" {
		return ""
	}
	return " on " + h
}

// shortHash is the first 12 hex digits of a commit, as git log --oneline
// shows them in a large repository.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func codeCopy(cs *ckpt.CodeState) *ckpt.CodeState {
	if cs == nil {
		return nil
	}
	c := *cs
	return &c
}
