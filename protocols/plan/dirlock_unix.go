//go:build unix

package plan

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPlanDir takes an exclusive kernel lock on the plan's directory itself
// (released if the process dies), waiting up to timeout. SetTask holds it
// so that two edits of one plan.md never interleave, even before any
// .checkpoint directory exists (SetTask makes none).
func lockPlanDir(dir string, timeout time.Duration) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if err == nil || errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s is locked by another edit of its plan.md for more than %s: try again", dir, timeout)
			}
			return nil, fmt.Errorf("locking %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
