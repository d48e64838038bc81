package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

func TestExitCodeTable(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("disk on fire"), 1},
		{usagef("bad flag"), 2},
		{fmt.Errorf("x: %w", ckpt.ErrInvalid), 2},
		{fmt.Errorf("x: %w", ckpt.ErrNotFound), 3},
		{&ckpt.ConflictError{ID: "a", Want: 1, Have: 2}, 4},
		{fmt.Errorf("x: %w", ckpt.ErrExists), 5},
		{fmt.Errorf("x: %w", ckpt.ErrNoStore), 6},
		{fmt.Errorf("x: %w", ckpt.ErrCorrupt), 7},
		{fmt.Errorf("x: %w", ckpt.ErrCycleLimit), 8},
		// A usage error wins over what it wraps; a conflict over invalid input.
		{usageError{fmt.Errorf("x: %w", ckpt.ErrNotFound)}, 2},
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
		{usagef("unknown flag: --x"), "see ckpt help"},
		{fmt.Errorf("%w: a step needs an ID", ckpt.ErrInvalid), "see ckpt help"},
		// A message that already names a command keeps its own advice.
		{fmt.Errorf("%w: w: create it first with ckpt start w", ckpt.ErrNotFound), "create it first with ckpt start w"},
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
