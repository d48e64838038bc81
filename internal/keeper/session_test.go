package keeper

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

// directStore counts the direct stores a session opens and closes over one
// memstore, and records the key origin of each append made directly.
type directStore struct {
	st             *memstore.Store
	opened, closed atomic.Int32
	origins        chan ckpt.KeyOrigin
}

func (d *directStore) open() (ckpt.Store, error) {
	d.opened.Add(1)
	return closeCounter{originRecorder{unclosing{d.st}, d.origins}, &d.closed}, nil
}

type originRecorder struct {
	ckpt.Store
	origins chan ckpt.KeyOrigin // nil: none recorded
}

func (o originRecorder) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if o.origins != nil {
		o.origins <- opts.KeyOrigin
	}
	return o.Store.Append(ctx, id, e, opts)
}

type closeCounter struct {
	ckpt.Store
	n *atomic.Int32
}

func (c closeCounter) Close() error { c.n.Add(1); return nil }

// TestSessionConformance runs the Store conformance suite against a
// session, through a keeper and with none (every call direct).
func TestSessionConformance(t *testing.T) {
	for _, kept := range []bool{true, false} {
		t.Run(map[bool]string{true: "kept", false: "direct"}[kept], func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) ckpt.Store {
				st := memstore.New()
				var p Paths
				if kept {
					p = serve(t, unclosing{st})
				} else {
					p = testPaths(t)
				}
				s, err := NewSession(SessionOptions{Paths: p, Direct: func() (ckpt.Store, error) { return unclosing{st}, nil }})
				if err != nil {
					t.Fatal(err)
				}
				if s.Connected() != kept {
					t.Fatalf("connected %v, want %v", s.Connected(), kept)
				}
				return s
			})
		})
	}
}

func titled(title string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
}

func noteOf(text string) ckpt.Event {
	return ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Note{Text: text})
}

// TestSessionStartsAKeeperAndMovesToIt: with no keeper, a session starts
// one and writes directly; once the keeper answers, the next call goes to
// it and the direct store is closed.
func TestSessionStartsAKeeperAndMovesToIt(t *testing.T) {
	ctx := context.Background()
	p := testPaths(t)
	d := &directStore{st: memstore.New()}
	var starts atomic.Int32
	ready, done := make(chan struct{}), make(chan error, 1)
	kctx, stop := context.WithCancel(ctx)
	start := func() {
		if starts.Add(1) > 1 {
			return
		}
		go func() {
			done <- Serve(kctx, Options{Open: func() (ckpt.Store, error) { return unclosing{d.st}, nil }, Paths: p, Idle: time.Minute, Ready: func() { close(ready) }})
		}()
	}
	s, err := NewSession(SessionOptions{Paths: p, Start: start, Direct: d.open, RetryEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if starts.Load() != 1 {
		t.Fatalf("a session with no keeper started %d", starts.Load())
	}
	<-ready
	if _, err := s.Append(ctx, "w", titled("t"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if !s.Connected() || d.opened.Load() != 0 {
		t.Fatalf("with the keeper up: connected %v, %d direct stores opened", s.Connected(), d.opened.Load())
	}
	c, err := Dial(p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st, err := c.Status(); err != nil || st.Requests != 2 || st.Connections != 1 { // 2: the append and this status
		t.Fatalf("the keeper's status: %+v, %v: want the session's one request and connection", st, err)
	}
	// The keeper goes away: the next call is made directly, and, since
	// the last start worked, a keeper is started again at once.
	c.Close()
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil // for the deferred wait
	if _, err := s.Append(ctx, "w", noteOf("after"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if starts.Load() != 2 || d.opened.Load() != 1 || s.Connected() {
		t.Errorf("after the keeper went: %d starts, %d direct stores opened, connected %v: want 2, 1, false", starts.Load(), d.opened.Load(), s.Connected())
	}
}

// lostKeeper listens on p's socket like a keeper, takes one request,
// applies it to st when apply is set (through the real decoder), and goes
// away without answering: a keeper killed mid-request. The socket is gone
// by the time the client sees the loss, so a redial finds no keeper.
func lostKeeper(t *testing.T, p Paths, st ckpt.Store, apply bool) <-chan Request {
	t.Helper()
	if err := ensureDir(p.Dir); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Request, 1)
	go func() {
		defer close(got)
		c, err := ln.AcceptUnix()
		ln.Close() // removes the socket
		if err != nil {
			return
		}
		defer c.Close()
		b, err := readFrame(c, maxRequest)
		if err != nil {
			return
		}
		r, err := DecodeRequest(b)
		if err != nil {
			t.Error(err)
			return
		}
		if apply && r.Op == OpAppend {
			if _, err := st.Append(context.Background(), r.ID, r.Event, ckpt.AppendOptions{IfRev: r.IfRev}); err != nil {
				t.Error(err)
			}
		}
		got <- r
	}()
	return got
}

// TestSessionRetriesALostAppendOnce: an append whose keeper dies before or
// after applying it is retried directly under the same key (the caller's,
// or the session's own) and is in the history once; the session starts a
// new keeper for later calls.
func TestSessionRetriesALostAppendOnce(t *testing.T) {
	ctx := context.Background()
	for _, applied := range []bool{false, true} {
		for _, key := range []string{"", "agent-key-1", "k-made-by-the-spool"} {
			p := testPaths(t)
			d := &directStore{st: memstore.New(), origins: make(chan ckpt.KeyOrigin, 1)}
			if _, err := d.st.Append(ctx, "w", titled("t"), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			sent := lostKeeper(t, p, d.st, applied)
			var starts atomic.Int32
			made := func(k string) bool { return strings.HasPrefix(k, "k-") }
			s, err := NewSession(SessionOptions{Paths: p, Start: func() { starts.Add(1) }, Direct: d.open, MadeKey: made})
			if err != nil || !s.Connected() {
				t.Fatalf("NewSession: %v, connected %v", err, s != nil && s.Connected())
			}
			e := noteOf("once")
			e.Key = key
			res, err := s.Append(ctx, "w", e, ckpt.AppendOptions{IfRev: 1})
			what := map[bool]string{false: "before applying", true: "after applying"}[applied] + ", key " + key
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			r := <-sent
			if r.Op != OpAppend || r.Event.Key == "" || key != "" && r.Event.Key != key {
				t.Fatalf("%s: the keeper was sent %+v", what, r)
			}
			// The session's own key goes as made for the call, and its
			// retry as resent: a store may keep a made key out of its key
			// index (pgstore does), and only a resend looks for it there.
			wantSent, wantRetry := ckpt.KeyGiven, ckpt.KeyGiven
			if key == "" {
				wantSent, wantRetry = ckpt.KeyNew, ckpt.KeyResent
			}
			if got := <-d.origins; r.KeyOrigin != wantSent || got != wantRetry {
				t.Errorf("%s: key origin sent %d, retried %d; want %d, %d", what, r.KeyOrigin, got, wantSent, wantRetry)
			}
			// Replayed says the caller's key was applied already; the
			// session's own key, or a wrapper's, is not the caller's
			// business.
			if res.State.Rev != 2 || res.Replayed != (applied && key != "" && !made(key)) {
				t.Errorf("%s: rev %d, replayed %v", what, res.State.Rev, res.Replayed)
			}
			events, err := d.st.History(ctx, "w", 1, 0)
			if err != nil || len(events) != 2 || events[1].Key != r.Event.Key {
				t.Errorf("%s: history %+v, %v: want the note once, under the key sent", what, events, err)
			}
			if starts.Load() != 1 || d.opened.Load() != 1 {
				t.Errorf("%s: %d keepers started, %d direct stores opened: want one each", what, starts.Load(), d.opened.Load())
			}
			s.Close()
			if d.closed.Load() != 1 {
				t.Errorf("%s: the direct store was not closed with the session", what)
			}
		}
	}
}

// TestSessionDoesNotRetryALostDelete: a Delete whose keeper went away is
// reported lost, not run again.
func TestSessionDoesNotRetryALostDelete(t *testing.T) {
	p := testPaths(t)
	d := &directStore{st: memstore.New()}
	sent := lostKeeper(t, p, d.st, false)
	s, err := NewSession(SessionOptions{Paths: p, Direct: d.open})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Delete(context.Background(), "w")
	var lost *LostError
	if !errors.As(err, &lost) || !errors.Is(err, ckpt.ErrUnavailable) {
		t.Fatalf("a lost Delete: %v", err)
	}
	if r := <-sent; r.Op != OpDelete {
		t.Fatalf("the keeper was sent %+v", r)
	}
	if d.opened.Load() != 0 {
		t.Error("the lost Delete was run directly")
	}
}

// TestSessionWatchResumesAfterALoss: a watch whose keeper stops resumes
// from the last change it delivered, directly, and delivers every later
// change once.
func TestSessionWatchResumesAfterALoss(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := memstore.New()
	p := testPaths(t)
	kctx, stop := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Serve(kctx, Options{Open: func() (ckpt.Store, error) { return unclosing{st}, nil }, Paths: p, Idle: time.Minute, Ready: func() { close(ready) }})
	}()
	<-ready
	s, err := NewSession(SessionOptions{Paths: p, Direct: func() (ckpt.Store, error) { return unclosing{st}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var (
		mu   sync.Mutex
		seen []string
	)
	changes := make(chan struct{}, 16)
	watched := make(chan error, 1)
	go func() {
		watched <- s.Watch(ctx, "", func(ch ckpt.Change) error {
			mu.Lock()
			seen = append(seen, ch.ID)
			mu.Unlock()
			changes <- struct{}{}
			return nil
		})
	}()
	// From the feed's start: a is delivered whenever the watch begins.
	if _, err := st.Append(ctx, "a", titled("a"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	<-changes
	stop() // the keeper goes away under the watch
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"b", "c"} {
		if _, err := st.Append(ctx, id, titled(id), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		<-changes
	}
	mu.Lock()
	got := strings.Join(seen, ",")
	mu.Unlock()
	if got != "a,b,c" {
		t.Errorf("the watch saw %s, want a,b,c", got)
	}
	cancel()
	if err := <-watched; !errors.Is(err, context.Canceled) {
		t.Errorf("the watch ended with %v", err)
	}
}

// TestAConnectedClientKeepsTheKeeper: a keeper does not exit idle while a
// client (a session of ckpt mcp) holds a connection, however long it sends
// nothing, and exits once that connection ends.
func TestAConnectedClientKeepsTheKeeper(t *testing.T) {
	p := testPaths(t)
	idle := 50 * time.Millisecond
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), Options{Open: func() (ckpt.Store, error) { return memstore.New(), nil }, Paths: p, Idle: idle, Ready: func() { close(ready) }})
	}()
	<-ready
	c, err := Dial(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status(); err != nil {
		t.Fatal(err)
	}
	// Several idle periods with the connection open and quiet: a keeper
	// that exited in them is the bug (a slow machine only makes them
	// longer).
	for start := time.Now(); time.Since(start) < 4*idle; time.Sleep(idle / 5) {
		select {
		case err := <-done:
			t.Fatalf("the keeper exited with a client connected: %v", err)
		default:
		}
	}
	if s, err := c.Status(); err != nil || s.Connections != 0 {
		t.Fatalf("the held connection after the idle periods: %+v, %v", s, err)
	}
	c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the keeper did not exit idle once its client went away")
	}
}
