package ckpt

import "context"

// ErrorReader is implemented by a Store that can read a checkpoint's open
// errors for less than a whole Get: filestore does, without the liveness
// record and, when the checkpoint has no errors, without decoding its
// state. The PostToolUse hook asks it after every shell command, to clear
// the command's earlier failure.
type ErrorReader interface {
	// OpenErrors returns the errors of checkpoint id not yet cleared, in
	// the order Get's ActiveErrors returns them (none: an empty slice or
	// nil). A missing checkpoint is ErrNotFound; damage that stops Get
	// stops it too, with the same error.
	OpenErrors(ctx context.Context, id string) ([]ErrorItem, error)
}

// OpenErrors returns the errors of checkpoint id not yet cleared: through
// st's ErrorReader when it has one, else Get's ActiveErrors. Like
// VerifyChain it looks through wrappers that have an Unwrap() Store
// method; a wrapper whose reads differ from the store it wraps must
// therefore implement ErrorReader itself or not unwrap.
func OpenErrors(ctx context.Context, st Store, id string) ([]ErrorItem, error) {
	for s := st; s != nil; {
		if r, ok := s.(ErrorReader); ok {
			return r.OpenErrors(ctx, id)
		}
		w, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	c, err := st.Get(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	return c.ActiveErrors(), nil
}
