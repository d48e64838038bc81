package ckpt

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// ErrNoChange, returned by an Update function, ends the update without
// appending anything; Update then returns the state it read and no error.
var ErrNoChange = errors.New("no change")

// UpdateAttempts bounds how often Update reads and tries again after a
// conflict before it gives up with the last *ConflictError.
const UpdateAttempts = 8

// Update is the one read-modify-write of checkpoint id: it reads the latest
// state, asks fn for the event that changes it, and appends that event with
// IfRev set to the revision read, so nothing written in between is lost.
// On a conflict it reads again and calls fn again, up to UpdateAttempts
// times with a growing random pause between tries (about a tenth of a
// second in all). fn must not keep c.
//
// fn returning ErrNoChange ends the update with the state read (Replayed
// false, a zero Event). Any other error from fn or the store is returned as
// it is. A key on the event makes the update exactly-once across retries of
// the whole call (Append replays a repeated key before it checks IfRev).
func Update(ctx context.Context, s Store, id string, fn func(c *Checkpoint) (Event, error)) (AppendResult, error) {
	return update(ctx, s, id, fn, 0)
}

// handOverPatience is how long a lifecycle operation keeps trying after
// conflicts once its UpdateAttempts are spent, and handOverAttempts how
// many tries it makes at least, however long they take. A hand-over
// reads, writes a whole archive and only then appends, a window that a
// busy writer (hooks firing, over a server) lands in again and again; a
// person waiting for a takeover would rather it tried for a couple of
// seconds. Each conflict means another write succeeded, so on a slow,
// loaded machine the tries, not the clock, are what must not run out.
const (
	handOverPatience = 3 * time.Second
	handOverAttempts = 32
)

// update is Update, trying on after UpdateAttempts for as long as
// patience allows from the first try (with patience, at least
// handOverAttempts tries).
func update(ctx context.Context, s Store, id string, fn func(c *Checkpoint) (Event, error), patience time.Duration) (AppendResult, error) {
	var err error
	deadline := time.Now().Add(patience)
	tries := UpdateAttempts
	if patience > 0 {
		tries = handOverAttempts
	}
	for attempt := 0; attempt < tries || time.Now().Before(deadline); attempt++ {
		if attempt > 0 {
			if err := pause(ctx, attempt); err != nil {
				return AppendResult{}, err
			}
		}
		var c *Checkpoint
		c, err = s.Get(ctx, id, 0)
		if err != nil {
			return AppendResult{}, err
		}
		var e Event
		e, err = fn(c)
		if errors.Is(err, ErrNoChange) {
			return AppendResult{State: c}, nil
		}
		if err != nil {
			return AppendResult{}, err
		}
		var r AppendResult
		r, err = s.Append(ctx, id, e, AppendOptions{IfRev: c.Rev})
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, ErrConflict) {
			return AppendResult{}, err
		}
	}
	return AppendResult{}, err
}

// pause waits a little longer after each conflict, with jitter so that
// writers that collided do not collide again in step.
func pause(ctx context.Context, attempt int) error {
	// Doubling from 1 ms to at most 50 ms, each between half and all of
	// that: the tries span about a tenth of a second, longer than a burst
	// of writes (a slow hand-over, an archive written first, lost every try
	// to a burst that outlasted a linear 35 ms), and contenders spread out.
	d := min(time.Millisecond<<min(attempt-1, 6), 50*time.Millisecond)
	d = d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
