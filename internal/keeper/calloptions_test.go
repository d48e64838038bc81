package keeper

import (
	"context"
	"net"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/spool"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/remote"
)

type attemptsKey struct{}

// seen is a store that records the context of its last Get.
type seen struct {
	ckpt.Store
	calls chan context.Context
}

func (s *seen) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	s.calls <- ctx
	return s.Store.Get(ctx, id, rev)
}

// TestCallOptionsReachTheStore: a client with Attempts (a server store's)
// makes the keeper's store call take the attempts and the deadline of the
// command's context, so that a command (a hook) waits no longer through
// the keeper than writing directly; without them the keeper's own limit
// holds and no attempts are set.
func TestCallOptionsReachTheStore(t *testing.T) {
	st := &seen{Store: memstore.New(), calls: make(chan context.Context, 1)}
	p := testPaths(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Open: func() (ckpt.Store, error) { return unclosing{st}, nil }, Paths: p, Idle: time.Minute,
			Ready: func() { close(ready) }, RequestTimeout: time.Hour,
			WithAttempts: func(ctx context.Context, n int) context.Context { return context.WithValue(ctx, attemptsKey{}, n) }})
	}()
	<-ready
	defer func() { cancel(); <-done }()
	c, err := Dial(p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	_, _ = c.Get(context.Background(), "w", 0)
	got := <-st.calls
	if d, ok := got.Deadline(); !ok || time.Until(d) < 50*time.Minute || got.Value(attemptsKey{}) != nil {
		t.Errorf("without call options: deadline %v (%v), attempts %v; want the keeper's hour and none", d, ok, got.Value(attemptsKey{}))
	}

	c.Attempts = func(context.Context) int { return 1 }
	cctx, ccancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer ccancel()
	_, _ = c.Get(cctx, "w", 0)
	got = <-st.calls
	want, _ := cctx.Deadline()
	if d, ok := got.Deadline(); !ok || d.After(want.Add(time.Minute)) || got.Value(attemptsKey{}) != 1 {
		t.Errorf("with call options: deadline %v (%v), attempts %v; want by %v and 1", d, ok, got.Value(attemptsKey{}), want)
	}
	c.Attempts = func(context.Context) int { return 0 }
	_, _ = c.Get(context.Background(), "w", 0)
	if got = <-st.calls; got.Value(attemptsKey{}) != nil {
		t.Errorf("0 attempts (the store's default) reached the store as %v", got.Value(attemptsKey{}))
	}
}

// TestUnreachableServerIsRetryable: a server the keeper's client cannot
// reach comes back to the command as the same error, retryable, so that a
// hook's spool takes the write.
func TestUnreachableServerIsRetryable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: refused at once
	rs, err := remote.New("http://"+addr, remote.Options{Token: "t", Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(serve(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Attempts = func(ctx context.Context) int { n, _ := spool.Attempts(ctx); return n }
	note := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Note{Text: "n"})
	ctx := context.Background()
	_, through := c.Append(ctx, "w", note, ckpt.AppendOptions{})
	_, direct := rs.Append(ctx, "w", note, ckpt.AppendOptions{})
	if through == nil || !ckpt.Retryable(through) || through.Error() != direct.Error() {
		t.Errorf("through the keeper %v (retryable %v), directly %v", through, ckpt.Retryable(through), direct)
	}
}
