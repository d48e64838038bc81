package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

func TestExitCodeTable(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("disk on fire"), 1},
		{cmdutil.Usagef("bad flag"), 2},
		{fmt.Errorf("x: %w", ckpt.ErrInvalid), 2},
		{fmt.Errorf("x: %w", ckpt.ErrNotFound), 3},
		{&ckpt.ConflictError{ID: "a", Want: 1, Have: 2}, 4},
		{fmt.Errorf("x: %w", ckpt.ErrExists), 5},
		{fmt.Errorf("x: %w", ckpt.ErrNoStore), 6},
		{fmt.Errorf("x: %w", ckpt.ErrCorrupt), 7},
		{fmt.Errorf("x: %w", ckpt.ErrCycleLimit), 8},
		// A usage error wins over what it wraps; a conflict over invalid input.
		{cmdutil.UsageError(fmt.Errorf("x: %w", ckpt.ErrNotFound)), 2},
		{fmt.Errorf("%w: %w", ckpt.ErrInvalid, ckpt.ErrConflict), 4},
	}
	for _, tc := range cases {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

func TestErrorLineIsOneLineAndSaysWhatToDo(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("%w: no .ckpt directory in /tmp/x or above", ckpt.ErrNoStore), "run ckpt init"},
		{fmt.Errorf("%w: w", ckpt.ErrNotFound), "ckpt ls"},
		{fmt.Errorf("%w: line 3 checksum\nsecond line", ckpt.ErrCorrupt), "ckpt repair"},
		{cmdutil.Usagef("unknown flag: --x"), "see ckpt help"},
		{fmt.Errorf("%w: a step needs an ID", ckpt.ErrInvalid), "see ckpt help"},
		// A message that already names a command keeps its own advice.
		{fmt.Errorf("%w: w: create it first with ckpt start w", ckpt.ErrNotFound), "create it first with ckpt start w"},
		// A store this user may read but not write.
		{fmt.Errorf("filestore: locking w: %w", &fs.PathError{Op: "open", Path: "/s/.ckpt/checkpoints/w/lock", Err: fs.ErrPermission}), "run ckpt as the user who owns it"},
	}
	for _, tc := range cases {
		line := errorLine(tc.err)
		if strings.Contains(line, "\n") || !strings.Contains(line, tc.want) {
			t.Errorf("errorLine(%q) = %q, want one line containing %q", tc.err, line, tc.want)
		}
	}
	if line := errorLine(fmt.Errorf("%w: w: create it first with ckpt start w", ckpt.ErrNotFound)); strings.Contains(line, "ckpt ls") {
		t.Errorf("a hint was added to a message with its own advice: %q", line)
	}
}

// cobra's "Did you mean this?" block reads as one question, not as
// "; ; Did you mean this?; show;".
func TestErrorLineAsksAboutATypo(t *testing.T) {
	err := cmdutil.Usagef("unknown command \"shwo\" for \"ckpt\"\n\nDid you mean this?\n\tshow\n\tshow2\n")
	want := `unknown command "shwo" for "ckpt"; did you mean show or show2? (see ckpt help)`
	if got := errorLine(err); got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
}

// The library's errors carry no CLI wording; the CLI adds its flags.
func TestErrorLineAddsTheCLIsHintToLibraryErrors(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&ckpt.ConflictError{ID: "a", Want: 1, Have: 2}, "read it again (ckpt show a) and retry with --if-rev 2"},
		{&ckpt.RefusedError{Op: "takeover", ID: "a", Why: "is done", Forcible: true, Err: ckpt.ErrNotResumable}, "pass --force to hand it over anyway, or start it over with ckpt restart a"},
		{&ckpt.RefusedError{Op: "archive", ID: "a", Rule: ckpt.RuleLive, Why: "is in_progress", Forcible: true, Err: ckpt.ErrInvalid}, "finish it first (ckpt done a), or pass --force"},
	}
	for _, tc := range cases {
		if line := errorLine(tc.err); !strings.HasSuffix(line, tc.want) {
			t.Errorf("errorLine(%v) = %q, want it to end %q", tc.err, line, tc.want)
		}
		if strings.Contains(tc.err.Error(), "--") || strings.Contains(tc.err.Error(), "ckpt ") {
			t.Errorf("library message %q speaks the CLI's words", tc.err)
		}
	}
	if line := errorLine(&ckpt.RefusedError{Op: "takeover", ID: "a", Why: "is an archive", Err: ckpt.ErrNotResumable}); strings.Contains(line, "--force") {
		t.Errorf("an archive cannot be forced, yet the hint says so: %q", line)
	}
	if got := ExitCode(&ckpt.RefusedError{Op: "archive", ID: "a", Err: ckpt.ErrInvalid}); got != ExitUsage {
		t.Errorf("refused archive exits %d, want %d", got, ExitUsage)
	}
}

// TestLibraryErrorsGetTheCLIsHint: the library says what happened; the CLI
// adds what to do, naming the checkpoint the message is about (issue 8).
func TestLibraryErrorsGetTheCLIsHint(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "kai-7/w", "--max-cycles", "1")
	h.OK("cycle", "kai-7/w")
	for _, tc := range []struct {
		code int
		args []string
		want string
	}{
		{ExitExists, []string{"start", "kai-7/w"}, "ckpt: checkpoint already exists: kai-7/w (revision 2): use another ID, or start it over with ckpt restart kai-7/w\n"},
		{ExitCycleLimit, []string{"cycle", "kai-7/w"}, "ckpt: cycle limit reached: kai-7/w has used 1 of 1 cycles: raise the limit with ckpt update kai-7/w --max-cycles N, or stop and ask for help\n"},
		{ExitNotFound, []string{"note", "kai-7/nope", "x"}, "ckpt start kai-7/nope"},
		{ExitUsage, []string{"unblock", "kai-7/w", "b9"}, `kai-7/w has no active blocker "b9" (active: none with an ID)`},
	} {
		if got := h.Fails(tc.code, tc.args...); !strings.Contains(got, tc.want) {
			t.Errorf("ckpt %v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
