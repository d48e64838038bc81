package ckpt_test

import (
	"context"
	"errors"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// verifying is a store that verifies chains, with a fixed verdict.
type verifying struct {
	ckpt.Store
	err error
}

func (v verifying) Verify(context.Context, string) error { return v.err }

// wrapper is a decorator that only says what it wraps.
type wrapper struct{ ckpt.Store }

func (w wrapper) Unwrap() ckpt.Store { return w.Store }

// TestVerifyChainLooksThroughWrappers: a store wrapped by decorators (the
// CLI's mirrors, the hooks' bound) is still verified; a store that cannot
// verify, wrapped or not, is reported as not verified.
func TestVerifyChainLooksThroughWrappers(t *testing.T) {
	ctx := context.Background()
	damage := errors.New("history damaged at byte 12")
	for _, tc := range []struct {
		name     string
		st       ckpt.Store
		verified bool
		err      error
	}{
		{"verifier", verifying{memstore.New(), damage}, true, damage},
		{"wrapped twice", wrapper{wrapper{verifying{memstore.New(), damage}}}, true, damage},
		{"wrapped, sound", wrapper{verifying{memstore.New(), nil}}, true, nil},
		{"cannot verify", memstore.New(), false, nil},
		{"wrapped, cannot verify", wrapper{memstore.New()}, false, nil},
		{"opaque wrapper", struct{ ckpt.Store }{verifying{memstore.New(), damage}}, false, nil},
	} {
		verified, err := ckpt.VerifyChain(ctx, tc.st, "w")
		if verified != tc.verified || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
			t.Errorf("%s: VerifyChain = %v, %v; want %v, %v", tc.name, verified, err, tc.verified, tc.err)
		}
	}
}
