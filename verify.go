package ckpt

import "context"

// ChainVerifier is implemented by a Store that can verify a checkpoint's
// whole history on demand (filestore does: it keeps the history as chained,
// checksummed lines that ordinary reads trust without reading). Paths that
// resume work on a checkpoint (ckpt resume, the SessionStart hook, MCP
// ckpt_resume) call it through VerifyChain before they build on the state,
// and say so in a warning when it fails.
type ChainVerifier interface {
	// Verify checks every event of checkpoint id: each record checks
	// itself and chains on from the one before, Apply accepts each, and
	// no acknowledged event is missing. nil means the chain is sound. On
	// damage the error wraps ErrCorrupt and says where, and the store
	// refuses further writes to id (Append fails with ErrCorrupt) until
	// it is repaired. A missing checkpoint is ErrNotFound.
	Verify(ctx context.Context, id string) error
}

// VerifyChain verifies checkpoint id's whole history if st can (it
// implements ChainVerifier), and reports whether it did. A store that
// cannot (its records are not chained on disk, or it checks them on every
// read) returns false and nil. A wrapper around a Store (a decorator that
// mirrors, bounds or scopes its calls) either implements ChainVerifier
// itself or has an Unwrap() Store method returning what it wraps:
// VerifyChain looks through any number of such wrappers.
func VerifyChain(ctx context.Context, st Store, id string) (verified bool, err error) {
	for st != nil {
		if v, ok := st.(ChainVerifier); ok {
			return true, v.Verify(ctx, id)
		}
		w, ok := st.(interface{ Unwrap() Store })
		if !ok {
			return false, nil
		}
		st = w.Unwrap()
	}
	return false, nil
}
