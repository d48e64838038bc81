// Package backoff is the one pause between retries every loop of ckpt
// shares (the remote client's calls and its change-feed reconnects, the
// PostgreSQL store's feed reconnects): exponential from a first pause up
// to a ceiling, with jitter so that clients cut off together do not come
// back together.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is a backoff: the pause before try n (1, 2…) is First doubled
// n-1 times, at most Max, plus up to half of it again at random.
type Policy struct {
	First time.Duration // 0 means 50 ms
	Max   time.Duration // 0 means 2 s
}

// Delay is the pause before try number attempt (1, 2…), jitter included.
func (p Policy) Delay(attempt int) time.Duration {
	first, ceiling := p.First, p.Max
	if first <= 0 {
		first = 50 * time.Millisecond
	}
	if ceiling <= 0 {
		ceiling = 2 * time.Second
	}
	d := ceiling
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 32 && first<<(attempt-1) > 0 {
		d = min(first<<(attempt-1), ceiling)
	}
	return d + time.Duration(rand.Int64N(int64(d)/2+1))
}

// Wait pauses before try number attempt, or returns ctx.Err() when ctx
// ends first.
func (p Policy) Wait(ctx context.Context, attempt int) error {
	t := time.NewTimer(p.Delay(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Loop counts the tries of a loop that retries for as long as it runs (a
// feed that reconnects): a try that made progress starts the count over,
// so a long-lived stream that breaks now and then always comes back
// quickly, and one that keeps failing backs off to Max.
type Loop struct {
	Policy
	failures int
}

// Wait pauses after a try that ended; progressed says whether it
// delivered anything.
func (l *Loop) Wait(ctx context.Context, progressed bool) error {
	if progressed {
		l.failures = 0
	}
	l.failures++
	return l.Policy.Wait(ctx, l.failures)
}
