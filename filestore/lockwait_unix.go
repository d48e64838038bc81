//go:build unix

package filestore

import (
	"context"
	"syscall"
	"time"
)

// waitFlock takes an exclusive flock on fd. A ctx that can never be done
// waits in the kernel; otherwise it tries the lock with a backoff (50 µs
// doubling to 2 ms, short next to the fsync the holder is waiting for) and
// gives up with ctx.Err() when ctx is done, because a process blocked in
// flock(2) cannot be cancelled.
func waitFlock(ctx context.Context, fd int) error {
	if ctx.Done() == nil {
		return flock(fd, syscall.LOCK_EX)
	}
	delay := 50 * time.Microsecond
	var timer *time.Timer
	for {
		err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EWOULDBLOCK {
			return err
		}
		if timer == nil {
			timer = time.NewTimer(delay)
			defer timer.Stop()
		} else {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		delay = min(2*delay, 2*time.Millisecond)
	}
}
