package remote

import (
	"context"

	"github.com/ckpt-dev/ckpt"
)

// plain is a Store that shows only the ckpt.Store methods, for a server
// whose store has neither a change feed nor a check (see Store.Limit):
// ckpt.CapabilitiesOf must tell the truth about the remote store.
type plain struct{ s *Store }

func (p plain) Append(ctx context.Context, id string, e ckpt.Event, o ckpt.AppendOptions) (ckpt.AppendResult, error) {
	return p.s.Append(ctx, id, e, o)
}
func (p plain) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	return p.s.Get(ctx, id, rev)
}
func (p plain) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	return p.s.History(ctx, id, from, limit)
}
func (p plain) List(ctx context.Context, o ckpt.ListOptions) (ckpt.Page, error) {
	return p.s.List(ctx, o)
}
func (p plain) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	return p.s.Beat(ctx, id, sig)
}
func (p plain) Delete(ctx context.Context, id string) error { return p.s.Delete(ctx, id) }
func (p plain) Close() error                                { return p.s.Close() }

// Remote returns the full client underneath.
func (p plain) Remote() *Store { return p.s }

func (p plain) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	return p.s.Watch(ctx, from, fn)
}
func (p plain) Head(ctx context.Context) (string, error) { return p.s.Head(ctx) }

// RunLifecycle implements ckpt.LifecycleRunner: every server runs the
// lifecycle verbs, whatever its store offers.
func (p plain) RunLifecycle(ctx context.Context, op ckpt.LifecycleOp) (ckpt.LifecycleOutcome, error) {
	return p.s.RunLifecycle(ctx, op)
}
