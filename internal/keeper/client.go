package keeper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// ErrNoKeeper is Dial's answer when no keeper of the store listens.
var ErrNoKeeper = errors.New("no keeper")

// LostError is a request whose keeper went away after it was sent and
// before it answered: it may or may not have been applied. An append
// carries its idempotency key (Key), so that a retry with the same key
// applies it at most once.
type LostError struct {
	Op  Op
	Key string
	Err error
}

func (e *LostError) Error() string {
	return fmt.Sprintf("the keeper went away before answering: %v", e.Err)
}

// Unwrap makes a lost request retryable (ckpt.ErrUnavailable).
func (e *LostError) Unwrap() []error { return []error{ckpt.ErrUnavailable, e.Err} }

// Client is a ckpt.Store served by a keeper: each call is one request and
// its answer over the socket. It is safe for concurrent use (calls take
// turns on the connection; a watch has its own).
type Client struct {
	path string
	uid  int
	// OnLost, when set, is called with a request the keeper lost (see
	// LostError) and its answer is the call's error: ckpt retries the
	// whole command directly.
	OnLost func(*LostError) error
	// Attempts, when set, makes every store call carry its call options
	// (Request.Attempts, Request.Budget): the attempts Attempts returns for
	// the call's context (0: the keeper store's default), and the time
	// left before the context's deadline, so that the keeper's store
	// spends no more on a call than the command would writing directly.
	// A server store's client sets it (spool.Attempts); the keeper of a
	// PostgreSQL store is sent none.
	Attempts func(context.Context) int

	mu   sync.Mutex
	conn *net.UnixConn
	in   *bufio.Reader // conn's answers: a frame's length and body in one read
}

// Dial connects to the keeper at p. It returns ErrNoKeeper when nothing
// listens there, and refuses (ErrUnsafeDir) a directory another user could
// have put the socket in, or a socket served by another user.
func Dial(p Paths) (*Client, error) {
	if !Supported {
		return nil, ErrNoKeeper
	}
	uid := os.Getuid()
	if err := checkDir(p.Dir, uid); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoKeeper
		}
		return nil, err
	}
	c, err := dialSocket(p.Socket, uid)
	if err != nil {
		return nil, err
	}
	return &Client{path: p.Socket, uid: uid, conn: c, in: bufio.NewReader(c)}, nil
}

// dialSocket connects to path and checks the user serving it.
func dialSocket(path string, uid int) (*net.UnixConn, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoKeeper, err)
	}
	if peer, err := peerUID(c); err != nil || peer != uid {
		c.Close()
		if err == nil {
			err = fmt.Errorf("%w: %s is served by user %d, not %d", ErrUnsafeDir, path, peer, uid)
		}
		return nil, err
	}
	return c, nil
}

// call sends one request frame and reads its answer's fields. ctx bounds
// the exchange: when it ends first, the call fails with its error (the
// request may have been applied, as when a direct write's context ends
// during its commit).
func (c *Client) call(ctx context.Context, op Op, key string, req []byte) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		conn, err := dialSocket(c.path, c.uid)
		if err != nil {
			return nil, c.lost(&LostError{Op: op, Key: key, Err: err})
		}
		c.conn, c.in = conn, bufio.NewReader(conn)
	}
	conn := c.conn
	if c.Attempts != nil && op != OpStatus && op != OpStop {
		var budget time.Duration
		if d, ok := ctx.Deadline(); ok {
			budget = max(time.Until(d), 1) // 0 would be no limit
		}
		req = appendCallOptions(req, int64(c.Attempts(ctx)), budget)
	}
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
		defer conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := conn.Write(req); err != nil {
		return nil, c.drop(ctx, &LostError{Op: op, Key: key, Err: err})
	}
	b, err := readFrame(c.in, maxAnswer)
	if err != nil {
		return nil, c.drop(ctx, &LostError{Op: op, Key: key, Err: err})
	}
	return decodeAnswer(b)
}

// drop closes a connection that failed mid-request and reports the loss,
// or ctx's error when ctx ending is what failed it.
func (c *Client) drop(ctx context.Context, e *LostError) error {
	c.conn.Close()
	c.conn, c.in = nil, nil
	if err := ctx.Err(); err != nil {
		return err
	}
	if errors.Is(e.Err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %v", context.DeadlineExceeded, e.Err)
	}
	return c.lost(e)
}

func (c *Client) lost(e *LostError) error {
	if c.OnLost != nil {
		return c.OnLost(e)
	}
	return e
}

// decodeAnswer returns an answer's fields, or the error it carries.
func decodeAnswer(b []byte) ([][]byte, error) {
	fields, err := splitFields(b[1:])
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: the keeper's answer does not decode: %v", ckpt.ErrUnavailable, err)
	case b[0] == answerError && len(fields) == 1:
		return nil, decodeError(fields[0])
	case b[0] != answerOK:
		return nil, fmt.Errorf("%w: the keeper answered kind %d", ckpt.ErrUnavailable, b[0])
	}
	return fields, nil
}

// request starts a request frame of op.
func request(op Op) *encoder { return newFrame(byte(op)) }

// badAnswer is the error of an answer with the wrong fields.
func badAnswer(op Op) error {
	return fmt.Errorf("%w: the keeper's answer to operation %d has the wrong fields", ckpt.ErrUnavailable, op)
}

// NewKey returns a fresh idempotency key for a hand-off ("keeper-", then
// ckpt.NewKey's time and random digits).
func NewKey() string { return ckpt.NewKey("keeper-") }

// Append sends e to the keeper's store. An event without a key gets one
// (NewKey, sent as ckpt.KeyNew), so that a retry of a lost request applies
// it at most once; that retry says ckpt.KeyResent (Session, HandOff).
func (c *Client) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if e.Key == "" {
		e.Key, opts.KeyOrigin = NewKey(), ckpt.KeyNew
	}
	f := request(OpAppend).str(id)
	if err := f.value(e); err != nil {
		return ckpt.AppendResult{}, fmt.Errorf("%w: the event does not encode: %v", ckpt.ErrInvalid, err)
	}
	fields, err := c.call(ctx, OpAppend, e.Key, f.num(opts.IfRev).num(appendFlags(opts)).frame())
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	var res ckpt.AppendResult
	var replayed int64
	if len(fields) < 4 || unmarshalField(fields[0], &res.State) != nil || decodeEvent(fields[1:], &res.Event) != nil ||
		number(fields[3], &replayed) != nil || res.State == nil {
		return ckpt.AppendResult{}, badAnswer(OpAppend)
	}
	res.Replayed = replayed != 0
	for _, w := range fields[4:] {
		res.Warnings = append(res.Warnings, string(w))
	}
	return res, nil
}

// Get reads checkpoint id at rev (0: the latest).
func (c *Client) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	fields, err := c.call(ctx, OpGet, "", request(OpGet).str(id).num(rev).frame())
	if err != nil {
		return nil, err
	}
	var cp *ckpt.Checkpoint
	if len(fields) != 1 || unmarshalField(fields[0], &cp) != nil || cp == nil {
		return nil, badAnswer(OpGet)
	}
	return cp, nil
}

// History reads id's events from from, at most limit (0: all).
func (c *Client) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	fields, err := c.call(ctx, OpHistory, "", request(OpHistory).str(id).num(from).num(int64(limit)).frame())
	if err != nil {
		return nil, err
	}
	if len(fields)%2 != 0 {
		return nil, badAnswer(OpHistory)
	}
	events := make([]ckpt.Event, len(fields)/2)
	for i := range events {
		if decodeEvent(fields[2*i:], &events[i]) != nil {
			return nil, badAnswer(OpHistory)
		}
	}
	return events, nil
}

// List reads one page; a *ckpt.DamagedError comes with its page, as the
// store returned them.
func (c *Client) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	p, err := json.Marshal(opts)
	if err != nil {
		return ckpt.Page{}, err
	}
	fields, err := c.call(ctx, OpList, "", request(OpList).bytes(p).frame())
	if err != nil {
		return ckpt.Page{}, err
	}
	var page ckpt.Page
	if len(fields) < 1 || len(fields) > 2 || json.Unmarshal(fields[0], &page) != nil {
		return ckpt.Page{}, badAnswer(OpList)
	}
	if len(fields) == 2 {
		return page, decodeError(fields[1])
	}
	return page, nil
}

// Beat records a sign of life.
func (c *Client) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	f := request(OpBeat).str(id)
	if err := f.value(sig); err != nil {
		return fmt.Errorf("%w: the signal does not encode: %v", ckpt.ErrInvalid, err)
	}
	_, err := c.call(ctx, OpBeat, "", f.frame())
	return err
}

// Delete removes an archived checkpoint.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.call(ctx, OpDelete, "", request(OpDelete).str(id).frame())
	return err
}

// Head returns the change feed's current cursor.
func (c *Client) Head(ctx context.Context) (string, error) {
	fields, err := c.call(ctx, OpHead, "", request(OpHead).frame())
	if err != nil {
		return "", err
	}
	if len(fields) != 1 {
		return "", badAnswer(OpHead)
	}
	return string(fields[0]), nil
}

// Status asks the keeper about itself.
func (c *Client) Status() (Status, error) { return c.status(OpStatus) }

// Stop asks the keeper to exit once its open connections end; it answers
// first.
func (c *Client) Stop() (Status, error) { return c.status(OpStop) }

func (c *Client) status(op Op) (Status, error) {
	fields, err := c.call(context.Background(), op, "", request(op).frame())
	if err != nil {
		return Status{}, err
	}
	var s Status
	if len(fields) != 1 || json.Unmarshal(fields[0], &s) != nil {
		return Status{}, badAnswer(op)
	}
	return s, nil
}

// Close closes the connection; a later call dials again.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn, c.in = nil, nil
	return err
}

// Watch follows the store's change feed from cursor from on a connection
// of its own, calling fn with each change, until fn fails, ctx ends or the
// store's watch ends.
func (c *Client) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	conn, err := dialSocket(c.path, c.uid)
	if err != nil {
		return &LostError{Op: OpWatch, Err: err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := conn.Write(request(OpWatch).str(from).frame()); err != nil {
		return &LostError{Op: OpWatch, Err: err}
	}
	in := bufio.NewReader(conn)
	for {
		b, err := readFrame(in, maxAnswer)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return &LostError{Op: OpWatch, Err: err}
		}
		if b[0] != answerChange {
			_, err := decodeAnswer(b)
			return err
		}
		fields, err := splitFields(b[1:])
		var ch ckpt.Change
		if err != nil || len(fields) != 1 || unmarshalField(fields[0], &ch) != nil {
			return badAnswer(OpWatch)
		}
		if err := fn(ch); err != nil {
			return err
		}
	}
}

var _ ckpt.Store = (*Client)(nil)
