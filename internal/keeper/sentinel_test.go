package keeper

import (
	"errors"
	"fmt"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestSentinelsAreFmtErrorf: the static sentinels read, wrap and match as
// the fmt.Errorf values they replace.
func TestSentinelsAreFmtErrorf(t *testing.T) {
	for _, c := range []struct {
		got  error
		want error
		of   error
	}{
		{errBadRequest, fmt.Errorf("%w: not a keeper request", ckpt.ErrInvalid), ckpt.ErrInvalid},
		{errUnsupported, fmt.Errorf("%w: the keeper runs on Linux only", ckpt.ErrUnavailable), ckpt.ErrUnavailable},
	} {
		if c.got.Error() != c.want.Error() || !errors.Is(c.got, c.of) || errors.Unwrap(c.got) != c.of || ckpt.ErrorCode(c.got) != ckpt.ErrorCode(c.want) {
			t.Errorf("%q (code %s) is not %q (code %s)", c.got, ckpt.ErrorCode(c.got), c.want, ckpt.ErrorCode(c.want))
		}
		if w := fmt.Errorf("%w: more", c.got); !errors.Is(w, c.got) || !errors.Is(w, c.of) {
			t.Errorf("%q wrapped does not match %q", w, c.got)
		}
	}
}
