package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The pause doubles from First up to Max, with at most half again of
// jitter, and never overflows for a loop that has failed for days.
func TestDelayDoublesUpToMax(t *testing.T) {
	p := Policy{First: 10 * time.Millisecond, Max: 80 * time.Millisecond}
	for attempt, base := range map[int]time.Duration{1: 10, 2: 20, 3: 40, 4: 80, 5: 80, 64: 80, 1 << 30: 80} {
		base *= time.Millisecond
		for range 50 {
			if d := p.Delay(attempt); d < base || d > base+base/2 {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", attempt, d, base, base+base/2)
			}
		}
	}
	if d := (Policy{}).Delay(1); d < 50*time.Millisecond || d > 75*time.Millisecond {
		t.Errorf("the default first pause is %v, want 50 ms plus jitter", d)
	}
}

// A loop that made progress comes back at the first pause; one that keeps
// failing backs off.
func TestLoopStartsOverAfterProgress(t *testing.T) {
	l := Loop{Policy: Policy{First: time.Millisecond, Max: time.Hour}}
	ctx := context.Background()
	for range 3 {
		if err := l.Wait(ctx, false); err != nil {
			t.Fatal(err)
		}
	}
	if l.failures != 3 {
		t.Fatalf("after three failed tries the count is %d", l.failures)
	}
	if err := l.Wait(ctx, true); err != nil || l.failures != 1 {
		t.Fatalf("a try that progressed left the count at %d (%v), want 1", l.failures, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := (Policy{First: time.Hour}).Wait(cctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on an ended context: %v", err)
	}
}
