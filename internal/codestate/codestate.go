// Package codestate reads where a checkpoint's code is (ckpt.CodeState)
// from a git repository, cheaply: one `git status --porcelain=v2 --branch`
// with GIT_OPTIONAL_LOCKS=0, so it never writes the index and never waits
// for or takes git's lock; nothing at all outside a repository. It also
// says what changed since a recorded state, for the continuation prompt.
package codestate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/gitroot"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// Probe returns the code state of the repository at or above dir at now,
// on host; nil and no error when dir is not in a git repository (or git is
// not installed: the state is an extra, not a requirement).
func Probe(ctx context.Context, dir, host string, now time.Time) (*ckpt.CodeState, error) {
	root := gitroot.Find(dir)
	if root == "" {
		return nil, nil
	}
	out, err := git(ctx, root, "status", "--porcelain=v2", "--branch", "--no-renames")
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, errNotRepo) {
		return nil, nil // no git, or a .git that is not a repository
	}
	if err != nil {
		return nil, err
	}
	cs, err := ParseStatus(out)
	if err != nil {
		return nil, err
	}
	cs.Root, cs.Host, cs.At = root, host, now.UTC()
	return cs, nil
}

var errNotRepo = errors.New("not a git repository")

// git runs git in dir without optional locks and returns its stdout.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "not a git repository") {
			return nil, errNotRepo
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, fmt.Errorf("git %s: %s", args[0], firstLine(msg))
		}
		return nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return out, nil
}

// ParseStatus reads `git status --porcelain=v2 --branch` output: the
// branch headers and one line per changed ("1", "2"), conflicted ("u") or
// untracked ("?") path. Root, Host and At are left for the caller.
func ParseStatus(out []byte) (*ckpt.CodeState, error) {
	var cs ckpt.CodeState
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			if err := parseHeader(&cs, rest); err != nil {
				return nil, err
			}
			continue
		}
		switch line[0] {
		case '1', '2', 'u':
			cs.Uncommitted++
		case '?':
			cs.Untracked++
		case '!':
		default:
			return nil, fmt.Errorf("git status: unexpected line %q", firstLine(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("git status: %w", err)
	}
	return &cs, nil
}

func parseHeader(cs *ckpt.CodeState, h string) error {
	key, val, _ := strings.Cut(h, " ")
	switch key {
	case "branch.oid":
		if val != "(initial)" {
			cs.Head = val
		}
	case "branch.head":
		if val != "(detached)" {
			cs.Branch = val
		}
	case "branch.upstream":
		cs.Upstream = val
	case "branch.ab":
		a, b, ok := strings.Cut(val, " ")
		ahead, err1 := strconv.Atoi(strings.TrimPrefix(a, "+"))
		behind, err2 := strconv.Atoi(strings.TrimPrefix(b, "-"))
		if !ok || err1 != nil || err2 != nil || ahead < 0 || behind < 0 {
			return fmt.Errorf("git status: bad branch.ab %q", val)
		}
		cs.Ahead, cs.Behind = ahead, behind
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// Change is what differs between a recorded code state and the code now.
type Change struct {
	// Elsewhere: the recorded state is of another host or repository
	// directory; nothing else is compared.
	Elsewhere bool
	// OtherBranch is set when another branch (or a detached HEAD) is
	// checked out now.
	OtherBranch bool
	// Moved counts the commits HEAD moved forward from the recorded one
	// (-1 when it moved elsewhere: a rewrite, a reset, another line).
	Moved int
	// Uncommitted is the number of uncommitted files now.
	Uncommitted int
}

// Since compares the recorded state was with now (both from Probe); it
// asks git how many commits lie between the two HEADs when they differ.
func Since(ctx context.Context, was, now *ckpt.CodeState) Change {
	var ch Change
	if was == nil || now == nil {
		return ch
	}
	if was.Host != now.Host || was.Root != now.Root {
		return Change{Elsewhere: true}
	}
	ch.OtherBranch = was.Branch != now.Branch
	ch.Uncommitted = now.Uncommitted
	if was.Head != "" && now.Head != "" && was.Head != now.Head {
		ch.Moved = -1
		if _, err := git(ctx, now.Root, "merge-base", "--is-ancestor", was.Head, now.Head); err == nil {
			if out, err := git(ctx, now.Root, "rev-list", "--count", was.Head+".."+now.Head); err == nil {
				if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
					ch.Moved = n
				}
			}
		}
	}
	return ch
}

// Note is what a resumed or taking-over session is told about its code:
// what changed between the state the last session recorded (was) and the
// code now (nil: the new session is not in a repository), in
// render.CodeSince's words, with the commits HEAD moved counted by git.
// "" when was is nil or nothing changed.
func Note(ctx context.Context, was, now *ckpt.CodeState) string {
	if was == nil {
		return ""
	}
	moved := 0
	if now != nil {
		moved = Since(ctx, was, now).Moved
	}
	return render.CodeSince(was, now, moved)
}

// NoteFrom is Note for a new session working in dir on host: it probes
// dir first. "" when was is nil, dir is "" or the probe fails (the note is
// an extra, never a reason to fail a resume).
func NoteFrom(ctx context.Context, was *ckpt.CodeState, dir, host string) string {
	if was == nil || dir == "" {
		return ""
	}
	now, err := Probe(ctx, dir, host, was.At)
	if err != nil {
		return ""
	}
	return Note(ctx, was, now)
}
