package keeper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// ErrRunning is Serve's answer when another keeper of the same store holds
// its lock: there is one keeper per store and user.
var ErrRunning = errors.New("a keeper of this store is running already")

// requestTimeout bounds one request's store call by default
// (Options.RequestTimeout): a client that went away must not hold the
// keeper's store forever.
const requestTimeout = 30 * time.Second

// Status is what a keeper says about itself (`ckpt keeper status`).
type Status struct {
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	Requests int64     `json:"requests"`
	// Connections are the clients connected, the asking one left out: a
	// long-lived client (ckpt mcp) holds one the whole time.
	Connections int    `json:"connections"`
	Idle        string `json:"idle"`
	Socket      string `json:"socket"`
}

// Options are a keeper's.
type Options struct {
	// Open opens the store the keeper serves, once the keeper holds its
	// lock (a second keeper opens nothing); Serve closes it.
	Open  func() (ckpt.Store, error)
	Paths Paths
	// Idle is how long the keeper waits without a request before Serve
	// returns.
	Idle time.Duration
	// Ready, when set, is called once the socket listens.
	Ready func()
	// Replaced, when set, is asked every CheckEvery whether the keeper's
	// program has been replaced (an upgrade): the keeper then stops as
	// when idle, and the next command starts the new one.
	Replaced   func() bool
	CheckEvery time.Duration
	// RequestTimeout bounds one request's store call when the request
	// sets no shorter budget of its own; 0 means 30 s.
	RequestTimeout time.Duration
	// WithAttempts, when set, gives a request's store call the number of
	// attempts the request asks for (its call options; spool.WithAttempts
	// for a server store).
	WithAttempts func(ctx context.Context, n int) context.Context
}

// server is one running keeper.
type server struct {
	o        Options
	st       ckpt.Store
	started  time.Time
	requests atomic.Int64
	uid      int

	mu     sync.Mutex
	conns  map[*net.UnixConn]bool // open
	active int                    // connections open
	last   time.Time              // the end of the last request, or the start
	stop   chan struct{}
	once   sync.Once
}

// Serve runs a keeper of o.Store on o.Paths until it has been idle for
// o.Idle, a client asks it to stop or ctx ends, then returns nil. It holds
// the store's lock file the whole time (ErrRunning when another keeper
// does) and removes its socket before letting the lock go, so a client
// never reaches a socket nobody serves but for the moment of a stop.
func Serve(ctx context.Context, o Options) error {
	if !Supported {
		return errUnsupported
	}
	if err := ensureDir(o.Paths.Dir); err != nil {
		return err
	}
	unlock, err := lock(o.Paths.Lock)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := o.Open()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := os.Remove(o.Paths.Socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: o.Paths.Socket, Net: "unix"})
	if err != nil {
		return err
	}
	defer ln.Close() // removes the socket
	if err := os.Chmod(o.Paths.Socket, 0o600); err != nil {
		return err
	}
	s := &server{o: o, st: st, conns: map[*net.UnixConn]bool{}, started: time.Now(), last: time.Now(), uid: os.Getuid(), stop: make(chan struct{})}
	if o.Ready != nil {
		o.Ready()
	}
	var wg sync.WaitGroup
	go func() {
		s.waitIdle(ctx)
		ln.Close()
	}()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			break
		}
		s.begin(c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer s.end(c)
			s.serveConn(c)
		}()
	}
	s.halt()
	s.endIdleConns()
	wg.Wait()
	return nil
}

// endIdleConns makes every open connection's wait for a request end now:
// a request being answered is answered first, and a client holding a
// connection it sends nothing on does not keep the keeper running.
func (s *server) endIdleConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.SetReadDeadline(time.Now())
	}
}

// waitIdle returns when the keeper should stop: idle long enough with no
// connection open, asked to stop, or ctx ended.
func (s *server) waitIdle(ctx context.Context) {
	t := time.NewTimer(s.o.Idle)
	defer t.Stop()
	var check <-chan time.Time
	if s.o.Replaced != nil && s.o.CheckEvery > 0 {
		tick := time.NewTicker(s.o.CheckEvery)
		defer tick.Stop()
		check = tick.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-check:
			if s.o.Replaced() {
				return
			}
			continue
		case <-t.C:
		}
		s.mu.Lock()
		left := s.o.Idle - time.Since(s.last)
		idle := s.active == 0 && left <= 0
		s.mu.Unlock()
		if idle {
			return
		}
		if left <= 0 {
			left = s.o.Idle // a connection is open: it resets the clock when it ends
		}
		t.Reset(left)
	}
}

func (s *server) begin(c *net.UnixConn) {
	s.mu.Lock()
	s.active++
	s.conns[c] = true
	s.mu.Unlock()
}

func (s *server) end(c *net.UnixConn) {
	s.mu.Lock()
	s.active--
	delete(s.conns, c)
	s.mu.Unlock()
}

// served records a request's end: the idle period starts again. Only
// requests count: a connection that asks nothing keeps no keeper alive.
func (s *server) served() {
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
}

func (s *server) halt() { s.once.Do(func() { close(s.stop) }) }

// serveConn answers c's requests in turn until it closes. A peer of
// another user is refused before anything is read.
func (s *server) serveConn(c *net.UnixConn) {
	defer c.Close()
	if uid, err := peerUID(c); err != nil || uid != s.uid {
		return
	}
	in := bufio.NewReader(c) // a request's length and body in one read
	for {
		b, err := readFrame(in, maxRequest)
		if err != nil {
			if errors.Is(err, errBadRequest) { // not a connection's end: say why
				_, _ = c.Write(errorFrame(err))
			}
			return
		}
		r, err := DecodeRequest(b)
		if err != nil {
			_, _ = c.Write(errorFrame(err))
			return
		}
		s.requests.Add(1)
		if r.Op == OpWatch {
			s.watch(c, in, r)
			s.served()
			return
		}
		answer := s.answer(r)
		s.served()
		if _, err := c.Write(answer); err != nil || r.Op == OpStop {
			if r.Op == OpStop {
				s.halt()
			}
			return
		}
	}
}

// answer runs r against the store and returns the answer's frame.
func (s *server) answer(r Request) []byte {
	limit := s.o.RequestTimeout
	if limit <= 0 {
		limit = requestTimeout
	}
	if r.Budget > 0 {
		limit = min(limit, r.Budget)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if r.Attempts > 0 && s.o.WithAttempts != nil {
		ctx = s.o.WithAttempts(ctx, int(r.Attempts))
	}
	st := s.st
	f := newFrame(answerOK)
	var err error
	switch r.Op {
	case OpAppend:
		var res ckpt.AppendResult
		res, err = st.Append(ctx, r.ID, r.Event, ckpt.AppendOptions{IfRev: r.IfRev, AsCheckpointAgent: r.AsAgent, KeyOrigin: r.KeyOrigin})
		if err == nil {
			err = appendResult(f, res)
		}
	case OpGet:
		var c *ckpt.Checkpoint
		if c, err = st.Get(ctx, r.ID, r.Rev); err == nil {
			err = f.value(c)
		}
	case OpHistory:
		var events []ckpt.Event
		events, err = st.History(ctx, r.ID, r.Rev, int(r.Limit))
		for i := 0; err == nil && i < len(events); i++ {
			err = f.event(events[i])
		}
	case OpList:
		return listAnswer(st.List(ctx, r.List))
	case OpBeat:
		err = st.Beat(ctx, r.ID, r.Signal)
	case OpDelete:
		err = st.Delete(ctx, r.ID)
	case OpHead:
		var cur string
		if cur, err = st.Head(ctx); err == nil {
			f.str(cur)
		}
	case OpStatus, OpStop:
		var p []byte
		p, err = json.Marshal(s.status())
		f.bytes(p)
	}
	if err != nil {
		return errorFrame(err)
	}
	return f.frame()
}

// appendResult writes res's fields: the state, the event (two fields), whether it was
// replayed, then each warning.
func appendResult(f *encoder, res ckpt.AppendResult) error {
	if err := errors.Join(f.value(res.State), f.event(res.Event)); err != nil {
		return err
	}
	replayed := int64(0)
	if res.Replayed {
		replayed = 1
	}
	f.num(replayed)
	for _, w := range res.Warnings {
		f.str(w)
	}
	return nil
}

// listAnswer is List's answer: the page, then the error when the store
// returned one with it (a *ckpt.DamagedError).
func listAnswer(page ckpt.Page, err error) []byte {
	var d *ckpt.DamagedError
	if err != nil && !errors.As(err, &d) {
		return errorFrame(err)
	}
	p, jerr := json.Marshal(page)
	if jerr != nil {
		return errorFrame(jerr)
	}
	f := newFrame(answerOK).bytes(p)
	if err != nil {
		f.bytes(errorJSON(err))
	}
	return f.frame()
}

// watch streams the store's changes from r.Cursor to c until the store's
// Watch ends or c goes away (a write fails, or in, c's reader, ends),
// then ends the stream with an ok or error frame.
func (s *server) watch(c *net.UnixConn, in *bufio.Reader, r Request) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The client ends a watch by closing the connection.
		var one [1]byte
		_, _ = in.Read(one[:])
		cancel()
	}()
	err := s.st.Watch(ctx, r.Cursor, func(ch ckpt.Change) error {
		f := newFrame(answerChange)
		if err := f.value(ch); err != nil {
			return err
		}
		_, err := c.Write(f.frame())
		return err
	})
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		_, _ = c.Write(errorFrame(err))
		return
	}
	_, _ = c.Write(newFrame(answerOK).frame())
}

func (s *server) status() Status {
	s.mu.Lock()
	conns := s.active - 1
	s.mu.Unlock()
	return Status{PID: os.Getpid(), Started: s.started, Requests: s.requests.Load(), Connections: conns, Idle: s.o.Idle.String(), Socket: s.o.Paths.Socket}
}

// errUnsupported: the keeper runs on Linux only (it checks its peers with
// SO_PEERCRED).
var errUnsupported error = &sentinel{ckpt.ErrUnavailable, "the keeper runs on Linux only"}
