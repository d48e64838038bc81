package claude

import (
	"context"
	"errors"
	"testing"
	"time"
)

// waitDone fails t unless ctx ends within a generous bound (no test
// depends on a tight clock).
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("the context did not end")
	}
}

// TestDeadlineEndsWithoutAWaiter: a passed deadline ends the context for a
// caller that only asks Err (the filestore between its system calls), and
// Done is then closed at once.
func TestDeadlineEndsWithoutAWaiter(t *testing.T) {
	ctx, cancel := withDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err after the deadline: %v", err)
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done is open after the deadline")
	}
	cancel()
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancel after the deadline changed Err to %v", err)
	}
}

// TestDeadlineWakesAWaiter: whoever waits on Done (a lock, a server, a
// derived context) is woken at the deadline, and Err agrees.
func TestDeadlineWakesAWaiter(t *testing.T) {
	at := time.Now().Add(200 * time.Millisecond)
	ctx, cancel := withDeadline(context.WithValue(context.Background(), t, "v"), at)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(at) {
		t.Fatalf("Deadline() = %v, %v; want %v", d, ok, at)
	}
	if ctx.Value(t) != "v" {
		t.Fatal("the parent's value is lost")
	}
	// A test descheduled past the deadline cannot tell early from on time:
	// Err is judged only when the clock says the deadline is still ahead.
	if err := ctx.Err(); err != nil && time.Now().Before(at) {
		t.Fatalf("Err before the deadline: %v", err)
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	waitDone(t, child)
	if time.Now().Before(at) {
		t.Fatal("ended before its deadline")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err at the deadline: %v, child %v", ctx.Err(), child.Err())
	}
}

// TestDeadlineCancel: the cancel function ends the context before its
// deadline, for a waiter and for Err alike; a parent that can be cancelled
// still reaches the child.
func TestDeadlineCancel(t *testing.T) {
	ctx, cancel := withDeadline(context.Background(), time.Now().Add(time.Hour))
	done := ctx.Done()
	cancel()
	<-done
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after cancel: %v", ctx.Err())
	}
	ctx, cancel = withDeadline(context.Background(), time.Now().Add(time.Hour))
	cancel()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after cancel, nothing waiting: %v", ctx.Err())
	}
	<-ctx.Done()

	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel = withDeadline(parent, time.Now().Add(time.Hour))
	defer cancel()
	cancelParent()
	waitDone(t, ctx)
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("Err after the parent's cancel: %v", ctx.Err())
	}
}
