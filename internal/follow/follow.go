// Package follow keeps a view of a store up to date: it redraws on each
// change in the store's change feed and on a slow timer, for what moves
// without writes (a process dies, a silence threshold passes). `ckpt
// status --watch` draws with it; any view over a ckpt.Watcher can.
//
// The package imports only the standard library and the root package.
package follow

import (
	"context"
	"fmt"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Redraw calls draw once, then again after each change in w's feed and on
// each tick, until ctx ends or ticks is closed; then it returns nil.
//
// The feed's end is taken before the first draw, so a change made after
// that draw's reading is never missed. Changes that arrive while draw runs
// make one more call, not one each. draw's error ends Redraw with that
// error, unless ctx has ended (a draw cut short by Ctrl-C is not a
// failure). A feed that stops on its own is an error. draw is called from
// Redraw's goroutine only.
func Redraw(ctx context.Context, w ckpt.Watcher, ticks <-chan time.Time, draw func(context.Context) error) error {
	head, err := w.Head(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan struct{}, 1)
	feedDone := make(chan error, 1)
	go func() {
		feedDone <- w.Watch(ctx, head, func(ckpt.Change) error {
			select {
			case changed <- struct{}{}:
			default: // a redraw is already due
			}
			return nil
		})
	}()
	for {
		if err := draw(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case _, ok := <-ticks:
			if !ok {
				return nil
			}
		case err := <-feedDone:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("the store's change feed stopped: %w", err)
		}
	}
}
