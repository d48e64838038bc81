package servercli

import (
	"context"
	"testing"
	"time"
)

// TestEscalateEveryRunsAtOnceAndStops: ckpt serve writes the seeds'
// escalations as soon as it starts (then every minute), at its clock's
// time, and stops with the server.
func TestEscalateEveryRunsAtOnceAndStops(t *testing.T) {
	at := time.Date(2026, 1, 15, 15, 1, 0, 0, time.UTC)
	ran := make(chan time.Time, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		escalateEvery(ctx, func(_ context.Context, now time.Time) {
			select {
			case ran <- now:
			default:
			}
		}, func() time.Time { return at })
	}()
	if got := <-ran; !got.Equal(at) {
		t.Errorf("first escalation at %v, want the clock's %v", got, at)
	}
	cancel()
	<-done
}
