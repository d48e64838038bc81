package claude

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// A hook runs inside an agent's session, so a store that hangs must not
// hang the agent: every write a hook makes runs under the hook's deadline
// (BoundedStore), and so do the slow parts (Bounded). A filestore itself
// stops waiting for a checkpoint's lock when the context ends.

// BoundedStore is the store of one hook call: Append runs under ctx, and a
// store that gives up because ctx ended (a checkpoint lock another process
// holds: a stuck ckpt, a person running flock(1)) is reported as such.
type BoundedStore struct {
	ckpt.Store
}

// Unwrap returns the store under the bound, so that capabilities such as
// ckpt.VerifyChain find it.
func (s *BoundedStore) Unwrap() ckpt.Store { return s.Store }

// Append implements ckpt.Store: it fails with an error saying the
// checkpoint is locked, having written nothing, when the store is still
// waiting for the lock when ctx ends.
func (s *BoundedStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	var res ckpt.AppendResult
	err := Bounded(ctx, func() error {
		var err error
		res, err = s.Store.Append(ctx, id, e, opts)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("%s: the checkpoint is locked by another process; the hook gave up waiting and recorded nothing", id)
		}
		return err
	})
	return res, err
}

// boundedGrace is how long Bounded waits, after ctx ended, for fn to return
// the store's own account of why it stopped. A store that honours ctx
// answers in microseconds, but on a loaded machine its goroutine may wait
// tens of milliseconds for a core: 50 ms lost the "locked by another
// process" account under load.
const boundedGrace = 150 * time.Millisecond

// Bounded runs fn and returns its error, or an error saying it timed out
// once ctx ends first; a panic in fn is an error too. fn keeps running in
// the background then; the hook's process ends soon after, and a write cut
// short by that is one the store never acknowledged (a torn last line, cut
// away by the next reader).
func Bounded(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("internal error: %v", p)
			}
		}()
		done <- fn()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// A store that honours ctx answers at once: prefer its word.
		select {
		case err := <-done:
			return err
		case <-time.After(boundedGrace):
		}
		return fmt.Errorf("gave up after the hook's time limit: %w", ctx.Err())
	}
}
