package feed

import (
	"errors"
	"fmt"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestErrBehindIsFmtErrorf: the static ErrBehind reads, wraps and matches
// as the fmt.Errorf value it replaces.
func TestErrBehindIsFmtErrorf(t *testing.T) {
	want := fmt.Errorf("%w: this stream fell too far behind the change feed; reconnect with Last-Event-ID to resume", ckpt.ErrUnavailable)
	if ErrBehind.Error() != want.Error() || !errors.Is(ErrBehind, ckpt.ErrUnavailable) ||
		errors.Unwrap(ErrBehind) != ckpt.ErrUnavailable || ckpt.ErrorCode(ErrBehind) != ckpt.ErrorCode(want) || !ckpt.Retryable(ErrBehind) {
		t.Errorf("ErrBehind %q (code %s) is not %q (code %s)", ErrBehind, ckpt.ErrorCode(ErrBehind), want, ckpt.ErrorCode(want))
	}
	if w := fmt.Errorf("stream: %w", ErrBehind); !errors.Is(w, ErrBehind) || errors.Is(w, errors.New(ErrBehind.Error())) {
		t.Errorf("%q does not match ErrBehind alone", w)
	}
}
