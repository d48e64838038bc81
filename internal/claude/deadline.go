package claude

import (
	"context"
	"sync"
	"time"
)

// A hook's time limit must not cost more than what it guards against. A Go
// timer starts the runtime's network poller and leaves a thread waiting in
// epoll: some 3-4% of a whole presence-only hook process, which has nothing
// to wait for (a beat takes no lock). deadlineCtx bounds the call all the
// same: Err reads the clock, and only Done, which whatever is about to wait
// calls (a checkpoint's lock, a server, Bounded), starts a timer.

// deadlineCtx is a context that ends at a fixed time, with no timer until
// something waits for it. Its parent can never be cancelled (it gives only
// values), so ending is the deadline or the cancel function.
type deadlineCtx struct {
	context.Context
	at time.Time

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	err   error
	timer *time.Timer
}

// withDeadline is context.WithDeadline(parent, at) that starts no timer
// until Done is called. A parent that can be cancelled gets the standard
// one: its cancellation must reach the child.
func withDeadline(parent context.Context, at time.Time) (context.Context, context.CancelFunc) {
	if parent.Done() != nil {
		return context.WithDeadline(parent, at)
	}
	c := &deadlineCtx{Context: parent, at: at}
	return c, func() { c.end(context.Canceled) }
}

// Deadline implements context.Context.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.at, true }

// Done implements context.Context: the channel is closed at the deadline,
// or at once when it has passed.
func (c *deadlineCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		c.expireLocked()
		if c.err != nil {
			close(c.done)
		} else {
			c.timer = time.AfterFunc(time.Until(c.at), func() { c.end(context.DeadlineExceeded) })
		}
	}
	return c.done
}

// Err implements context.Context: context.DeadlineExceeded once the
// deadline has passed, whether or not anything waited for it.
func (c *deadlineCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked()
	return c.err
}

func (c *deadlineCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

// expireLocked ends c when its deadline has passed.
func (c *deadlineCtx) expireLocked() {
	if c.err == nil && !time.Now().Before(c.at) {
		c.endLocked(context.DeadlineExceeded)
	}
}

func (c *deadlineCtx) endLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}

func (c *deadlineCtx) String() string { return "claude.withDeadline(" + c.at.String() + ")" }
