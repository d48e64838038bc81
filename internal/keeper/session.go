package keeper

import (
	"context"
	"errors"
	"sync"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Session is the store of a long-lived process (ckpt mcp) over a store a
// keeper serves: its calls go to the keeper at Paths, over one connection,
// while one answers, and to the store opened directly (Direct) while none
// does. Such a process outlives keepers (killed, stopped, or replaced by
// an upgrade, which stops the old one): when a dial finds none, Start
// starts one in the background (at most once per RetryEvery until one
// answers) and the call is made directly; a later call dials again, and
// once a keeper answers the direct store is closed (its connections are
// what the keeper saves).
//
// A call whose keeper went away after it was sent and before it answered
// (a LostError) may or may not have been applied. The session retries it
// only where that cannot apply it twice: an append always carries an
// idempotency key (the caller's, else one the session makes with NewKey,
// as the keeper's client does, sent as ckpt.KeyNew and resent as
// ckpt.KeyResent), and a store applies a key at most once,
// so the retry of an append the lost keeper had applied replays its
// result (reported as not replayed when the key was the session's own or
// a wrapper's, MadeKey: the caller made one call); reads, Head and Beat
// (a repeated beat changes nothing) are retried as they are. Delete is
// not retried: its loss is returned. A retry goes to a keeper that
// answers a new dial, else directly, and a second loss goes directly.
type Session struct {
	o SessionOptions

	mu          sync.Mutex
	cl          *Client
	direct      ckpt.Store
	directUsers int // calls on direct now: it is closed only when none
	lastStart   time.Time
	started     bool
}

// SessionOptions are a Session's.
type SessionOptions struct {
	Paths Paths
	// Start starts a keeper of the store in the background; nil starts
	// none.
	Start func()
	// Direct opens the store directly, for the calls made while no keeper
	// answers; the session closes it.
	Direct func() (ckpt.Store, error)
	// Attempts is each keeper client's (Client.Attempts): set for a server
	// store.
	Attempts func(context.Context) int
	// RetryEvery is the least time between two starts of a keeper; 0 means
	// 10 s.
	RetryEvery time.Duration
	// MadeKey, when set, reports an idempotency key that a wrapper of the
	// session made, not its caller (a server store's spool's): a replay of
	// it by the retry of a lost append is that append's own, reported as
	// not replayed, like a key the session made.
	MadeKey func(key string) bool
}

// NewSession returns a session of the keeper at o.Paths and dials it once,
// starting one when none answers, so that a keeper is up by the first
// call. It refuses a keeper directory another user could write to
// (ErrUnsafeDir): the caller then opens the store directly.
func NewSession(o SessionOptions) (*Session, error) {
	if o.RetryEvery <= 0 {
		o.RetryEvery = 10 * time.Second
	}
	s := &Session{o: o}
	c, err := Dial(o.Paths)
	switch {
	case err == nil:
		c.Attempts = o.Attempts
		s.cl = c
	case errors.Is(err, ErrUnsafeDir):
		return nil, err
	default:
		s.startLocked()
	}
	return s, nil
}

// Connected reports whether the session's next call goes to a keeper it
// holds a connection to.
func (s *Session) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cl != nil
}

// startLocked starts a keeper unless one was started within RetryEvery.
func (s *Session) startLocked() {
	if s.o.Start == nil || s.started && time.Since(s.lastStart) < s.o.RetryEvery {
		return
	}
	s.started, s.lastStart = true, time.Now()
	s.o.Start()
}

// acquire returns the store the next call goes to: the keeper's client
// (cl, then not nil) when one answers and direct is false, else the direct
// store, held until release.
func (s *Session) acquire(direct bool) (st ckpt.Store, cl *Client, release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !direct && s.cl == nil {
		c, err := Dial(s.o.Paths)
		switch {
		case err == nil:
			c.Attempts = s.o.Attempts
			s.cl = c
			s.started = false // that start worked: a keeper lost later is started at once
		case !errors.Is(err, ErrUnsafeDir):
			s.startLocked()
		}
	}
	if !direct && s.cl != nil {
		if s.direct != nil && s.directUsers == 0 {
			_ = s.direct.Close()
			s.direct = nil
		}
		return s.cl, s.cl, func() {}, nil
	}
	if s.direct == nil {
		if s.direct, err = s.o.Direct(); err != nil {
			s.direct = nil
			return nil, nil, nil, err
		}
	}
	s.directUsers++
	return s.direct, nil, func() {
		s.mu.Lock()
		s.directUsers--
		s.mu.Unlock()
	}, nil
}

// forget drops cl, whose keeper lost a request: the next call dials again.
func (s *Session) forget(cl *Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cl == cl {
		_ = cl.Close()
		s.cl = nil
	}
}

// call runs op on the session's store; a request the keeper lost is run
// again when retry is set (see Session): on a keeper that answers a new
// dial, else directly, and directly after a second loss.
func call[T any](s *Session, retry bool, op func(ckpt.Store) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		st, cl, release, err := s.acquire(attempt == 2)
		if err != nil {
			var zero T
			return zero, err
		}
		v, err := op(st)
		release()
		var lost *LostError
		if cl == nil || !errors.As(err, &lost) {
			return v, err
		}
		s.forget(cl)
		if !retry {
			return v, err
		}
	}
}

// Append appends e, under an idempotency key (see Session).
func (s *Session) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	ours := e.Key == ""
	if ours {
		e.Key, opts.KeyOrigin = NewKey(), ckpt.KeyNew
	}
	tries := 0
	res, err := call(s, true, func(st ckpt.Store) (ckpt.AppendResult, error) {
		tries++
		if tries > 1 && opts.KeyOrigin == ckpt.KeyNew {
			opts.KeyOrigin = ckpt.KeyResent // the lost attempt may have applied it
		}
		return st.Append(ctx, id, e, opts)
	})
	if ours || tries > 1 && s.o.MadeKey != nil && s.o.MadeKey(e.Key) {
		res.Replayed = false // only a lost attempt of this call can have used the key
	}
	return res, err
}

// Get reads checkpoint id at rev.
func (s *Session) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	return call(s, true, func(st ckpt.Store) (*ckpt.Checkpoint, error) { return st.Get(ctx, id, rev) })
}

// History reads id's events.
func (s *Session) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	return call(s, true, func(st ckpt.Store) ([]ckpt.Event, error) { return st.History(ctx, id, from, limit) })
}

// List reads one page.
func (s *Session) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	return call(s, true, func(st ckpt.Store) (ckpt.Page, error) { return st.List(ctx, opts) })
}

// Beat records a sign of life; a repeated beat changes nothing.
func (s *Session) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	_, err := call(s, true, func(st ckpt.Store) (struct{}, error) { return struct{}{}, st.Beat(ctx, id, sig) })
	return err
}

// Delete removes an archived checkpoint; a lost Delete is not retried.
func (s *Session) Delete(ctx context.Context, id string) error {
	_, err := call(s, false, func(st ckpt.Store) (struct{}, error) { return struct{}{}, st.Delete(ctx, id) })
	return err
}

// Head returns the change feed's current cursor.
func (s *Session) Head(ctx context.Context) (string, error) {
	return call(s, true, func(st ckpt.Store) (string, error) { return st.Head(ctx) })
}

// Watch follows the change feed. A watch whose keeper goes away resumes
// from the last change it delivered, through a keeper that answers or
// directly: every change once, as the feed promises. A watch from
// CursorNow starts from Head, so that a resume before the first change
// misses nothing either.
func (s *Session) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	if from == ckpt.CursorNow {
		var err error
		if from, err = s.Head(ctx); err != nil {
			return err
		}
	}
	_, err := call(s, true, func(st ckpt.Store) (struct{}, error) {
		return struct{}{}, st.Watch(ctx, from, func(ch ckpt.Change) error {
			if err := fn(ch); err != nil {
				return err
			}
			from = ch.Cursor
			return nil
		})
	})
	return err
}

// Close closes the keeper connection and the direct store.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.cl != nil {
		errs = append(errs, s.cl.Close())
		s.cl = nil
	}
	if s.direct != nil {
		errs = append(errs, s.direct.Close())
		s.direct = nil
	}
	return errors.Join(errs...)
}

var _ ckpt.Store = (*Session)(nil)
