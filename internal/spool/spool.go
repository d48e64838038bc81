// Package spool is this machine's spool of a ckpt serve store: a
// ckpt.Store wrapper that keeps, durably and in order, the writes its
// server cannot take while it is away, and delivers them before every
// later call. It links no HTTP client (nor net/http): ckpt-server wraps
// its HTTP client in it (remote.NewSpool), and ckpt, which links none,
// its keeper's client, so that a command's spool is the same either way.
package spool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// Spool is a store that loses no write while its server is away. Before
// each call it delivers, in order, the writes spooled earlier (by this
// process or another one using the same directory); when Spooling is set,
// an append the server cannot take (a retryable failure, after the
// client's own retries) is written durably to the spool directory
// (fsync'd) instead, and Append returns a *SpooledError, which a caller
// reports as a warning: the write is not lost, only late.
//
// A write that reads first (ckpt.Update, plan sync, the four-step
// checkpoint) works offline too when spooling: the spool keeps the last
// state of each checkpoint written through it, or read while spooling (in
// state/ under the spool directory), and while the server is unreachable Get returns that state
// with the writes spooled since laid over it. The write made from it is
// spooled with its If-Match (the revision it read), so it lands as made
// or, if another writer moved the checkpoint meanwhile, is refused and
// moved to failed/ rather than laid over work it never saw.
//
// Every spooled event carries an idempotency key (one is made when it has
// none), so a delivery repeated after a crash replays instead of appending
// twice. A spooled write the server refuses for good (a conflict on its
// If-Match, an invalid event, a forbidden ID) is moved to failed/ in the
// spool directory with the reason, so it cannot block the writes after it.
type Spool struct {
	ckpt.Store
	dir      string
	spooling bool
	seq      atomic.Int64
	// down is set while the server has just been unreachable: calls then
	// make one attempt instead of the client's retries.
	down atomic.Bool
	// Warn receives one line per spooled write that failed for good.
	warn func(string)
}

// DirOf is this machine's spool of the server at serverURL:
// ckpt/spool/<16 hex digits of the URL's SHA-256, a trailing slash
// ignored> in the XDG state directory, stateHome ($XDG_STATE_HOME) when
// it is absolute, else home/.local/state. "" when neither names one.
func DirOf(stateHome, home, serverURL string) string {
	base := stateHome
	if !filepath.IsAbs(base) {
		if !filepath.IsAbs(home) {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(strings.TrimSuffix(serverURL, "/")))
	return filepath.Join(base, "ckpt", "spool", hex.EncodeToString(sum[:8]))
}

// New wraps st with the spool directory dir. spooling says whether
// appends that cannot reach the server are spooled (hooks, a write given
// --spool) or fail as usual; spooled writes are delivered either way.
func New(st ckpt.Store, dir string, spooling bool, warn func(string)) *Spool {
	if warn == nil {
		warn = func(string) {}
	}
	return &Spool{Store: st, dir: dir, spooling: spooling, warn: warn}
}

// SpooledError is returned by Append for a write kept in the spool.
type SpooledError struct {
	ID    string
	Dir   string
	Cause error
}

func (e *SpooledError) Error() string {
	return fmt.Sprintf("the server is unreachable (%v): the write to %s is spooled in %s and the next ckpt call delivers it", e.Cause, e.ID, e.Dir)
}

// spooled is one spooled write as its file holds it.
type spooled struct {
	ID        string        `json:"id"`
	Event     httpapi.Event `json:"event"`
	IfRev     int64         `json:"if_rev,omitempty"`
	AsAgent   bool          `json:"as_agent,omitempty"` // AppendOptions.AsCheckpointAgent
	SpooledAt time.Time     `json:"spooled_at"`
}

// Pending returns how many writes wait in the spool directory dir (0 when
// it does not exist): what ckpt status reports.
func Pending(dir string) (int, error) {
	names, err := entries(dir)
	return len(names), err
}

// Waiting is what a spool directory holds: what ckpt status reports.
type Waiting struct {
	Writes int       // spooled writes not delivered yet
	Oldest time.Time // when the oldest of them was spooled
	Failed int       // writes the server refused for good, kept in failed/
}

// Look reports what the spool directory dir holds (nothing when it does
// not exist).
func Look(dir string) (Waiting, error) {
	names, err := entries(dir)
	if err != nil {
		return Waiting{}, err
	}
	w := Waiting{Writes: len(names)}
	if len(names) > 0 {
		// The name starts with the time it was spooled (see add).
		if ns, err := strconv.ParseInt(strings.SplitN(names[0], "-", 2)[0], 10, 64); err == nil {
			w.Oldest = time.Unix(0, ns).UTC()
		}
	}
	failed, err := entries(filepath.Join(dir, "failed"))
	w.Failed = len(failed)
	return w, err
}

// entries lists the spooled files of dir in delivery order.
func entries(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".json") && de.Type().IsRegular() {
			names = append(names, de.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// lock takes the spool's lock, so that one process delivers or adds at a
// time and order is kept.
func (s *Spool) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	fl := flock.New(filepath.Join(s.dir, "lock"))
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("locking the spool %s: %v", s.dir, err)
	}
	return func() { fl.Unlock() }, nil
}

// Deliver sends the spooled writes in order until the spool is empty or
// the server fails again (then the rest stay, and the failure is
// returned). It is called before every operation; call it directly to
// flush.
func (s *Spool) Deliver(ctx context.Context) error {
	names, err := entries(s.dir)
	if err != nil || len(names) == 0 {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if names, err = entries(s.dir); err != nil {
		return err
	}
	ctx = s.attempts(ctx)
	for _, name := range names {
		if err := s.deliverOne(ctx, name); err != nil {
			s.observe(err)
			return err
		}
	}
	s.observe(nil)
	return nil
}

// attempts returns ctx with one attempt per call while the server is down.
func (s *Spool) attempts(ctx context.Context) context.Context {
	if s.down.Load() {
		return WithAttempts(ctx, 1)
	}
	return ctx
}

// observe notes whether the server answered (err nil or not retryable).
func (s *Spool) observe(err error) {
	s.down.Store(err != nil && ckpt.Retryable(err))
}

func (s *Spool) deliverOne(ctx context.Context, name string) error {
	path := filepath.Join(s.dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var sp spooled
	if err := json.Unmarshal(data, &sp); err != nil {
		return s.fail(name, fmt.Errorf("%w: not a spooled write: %v", ckpt.ErrCorrupt, err))
	}
	// Resent: a spooled write may have been applied by the send whose
	// answer was lost, under a key made for it and so in no key index.
	r, err := s.Store.Append(ctx, sp.ID, sp.Event.Store(), ckpt.AppendOptions{IfRev: sp.IfRev, AsCheckpointAgent: sp.AsAgent, KeyOrigin: ckpt.KeyResent})
	switch {
	case err == nil:
		s.remember(r.State) // the next offline read builds on it
		return os.Remove(path)
	case ckpt.Retryable(err) || ctx.Err() != nil:
		return err
	}
	return s.fail(name, err)
}

// fail moves a spooled write the server refused for good aside.
func (s *Spool) fail(name string, why error) error {
	failed := filepath.Join(s.dir, "failed")
	if err := os.MkdirAll(failed, 0o700); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(s.dir, name), filepath.Join(failed, name)); err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(failed, strings.TrimSuffix(name, ".json")+".reason"), []byte(why.Error()+"\n"), 0o600)
	s.warn(fmt.Sprintf("a spooled write was refused by the server and moved to %s: %v", failed, why))
	return nil
}

// add writes one write to the spool, durably.
func (s *Spool) add(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := json.Marshal(spooled{ID: id, Event: httpapi.WireEvent(e), IfRev: opts.IfRev, AsAgent: opts.AsCheckpointAgent, SpooledAt: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	name := fmt.Sprintf("%020d-%06d-%d.json", time.Now().UnixNano(), s.seq.Add(1), os.Getpid())
	return atomicfile.WriteFile(filepath.Join(s.dir, name), data, 0o600)
}

// Append delivers the spool, then appends e; see Spool for what happens
// when the server cannot be reached. While writes wait in the spool a new
// one joins them, so the server receives them in order.
func (s *Spool) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if err := ckpt.ValidateID(id); err != nil {
		return ckpt.AppendResult{}, err
	}
	if e.Key == "" {
		e.Key, opts.KeyOrigin = NewKey(), ckpt.KeyNew
	}
	derr := s.Deliver(ctx)
	if derr == nil {
		r, err := s.Store.Append(s.attempts(ctx), id, e, opts)
		s.observe(err)
		if err == nil {
			s.remember(r.State) // every write: the state an offline hook builds on
		}
		if err == nil || !s.spooling || !ckpt.Retryable(err) {
			return r, err
		}
		derr = err
	} else if !s.spooling {
		return ckpt.AppendResult{}, derr
	}
	if !ckpt.Retryable(derr) {
		return ckpt.AppendResult{}, derr
	}
	if _, err := json.Marshal(e); err != nil {
		return ckpt.AppendResult{}, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	if err := s.add(ctx, id, e, opts); err != nil {
		return ckpt.AppendResult{}, fmt.Errorf("the server is unreachable (%v) and the write could not be spooled: %w", derr, err)
	}
	return ckpt.AppendResult{}, &SpooledError{ID: id, Dir: s.dir, Cause: derr}
}

// Get delivers the spool first, so a read after a spooled write sees it
// once the server is back. When spooling and the server cannot be reached,
// the latest state comes from the spool's own record (see Spool); a
// checkpoint this machine never read or wrote gets the server's error.
func (s *Spool) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	_ = s.Deliver(ctx)
	c, err := s.Store.Get(s.attempts(ctx), id, rev)
	s.observe(err)
	if !s.spooling || rev != 0 {
		return c, err
	}
	if err == nil {
		s.remember(c)
		return c, nil
	}
	if !ckpt.Retryable(err) {
		return nil, err
	}
	if known := s.recall(id); known != nil {
		return known, nil
	}
	return nil, err
}

// statePath is where the spool keeps the last state of id it saw.
func (s *Spool) statePath(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(s.dir, "state", hex.EncodeToString(sum[:12])+".json")
}

// remember keeps c as the last state of its checkpoint this machine saw.
// It is a cache, not a record: it is rewritten in place, without fsync or
// a rename (no new inode on every write), and a torn, interleaved or
// missing file does not decode (or names another revision's ID) and only
// means an offline read fails as it would without it.
func (s *Spool) remember(c *ckpt.Checkpoint) {
	if c == nil {
		return
	}
	data, err := wire.Marshal(c)
	if err != nil {
		return
	}
	path := s.statePath(c.ID)
	if os.WriteFile(path, data, 0o600) == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
		os.WriteFile(path, data, 0o600)
	}
}

// recall returns the last state of id the spool saw with the writes
// spooled for id since laid over it in order, or nil when it knows none.
func (s *Spool) recall(id string) *ckpt.Checkpoint {
	var c *ckpt.Checkpoint
	if data, err := os.ReadFile(s.statePath(id)); err == nil {
		var known ckpt.Checkpoint
		if err := wire.Unmarshal(data, &known); err == nil && known.ID == id && known.Rev > 0 {
			c = &known
		}
	}
	names, err := entries(s.dir)
	if err != nil {
		return nil
	}
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(s.dir, name))
		var sp spooled
		if err != nil || json.Unmarshal(data, &sp) != nil || sp.ID != id {
			continue
		}
		e := sp.Event.Store()
		if e.At.IsZero() {
			e.At = sp.SpooledAt
		}
		e.Seq = 1
		if c != nil {
			e.Seq = c.Rev + 1
		}
		next, err := ckpt.Apply(id, c, e)
		if err != nil {
			return nil // the server will refuse it too: do not build on it
		}
		c = next
	}
	return c
}

// List delivers the spool first.
func (s *Spool) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	_ = s.Deliver(ctx)
	p, err := s.Store.List(s.attempts(ctx), opts)
	s.observe(err)
	return p, err
}

// Beat delivers the spool first. A beat is not spooled: a late sign of
// life says nothing.
func (s *Spool) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	_ = s.Deliver(ctx)
	err := s.Store.Beat(s.attempts(ctx), id, sig)
	s.observe(err)
	return err
}

// Dir returns the spool directory.
func (s *Spool) Dir() string { return s.dir }

// Unwrap returns the client under the spool, so that its capabilities
// (ckpt.Checker, ckpt.Repairer) reach callers through ckpt.As.
func (s *Spool) Unwrap() ckpt.Store { return s.Store }

// RunLifecycle implements ckpt.LifecycleRunner: the spool is delivered
// first, so the server runs the operation after the writes made before it,
// and then the server runs it. A lifecycle operation is not spooled: it
// reads before it writes, so it needs the server.
func (s *Spool) RunLifecycle(ctx context.Context, op ckpt.LifecycleOp) (ckpt.LifecycleOutcome, error) {
	if err := s.Deliver(ctx); err != nil {
		return ckpt.LifecycleOutcome{}, err
	}
	return ckpt.RunLifecycle(ctx, s.Store, op)
}

// attemptsKey is the context key of WithAttempts.
type attemptsKey struct{}

// WithAttempts returns ctx with the number of attempts a store call under
// it makes (the client's own setting otherwise): the spool asks for one
// while the server was unreachable a moment ago, so that a hook does not
// spend its time limit retrying every call. A client that retries reads
// it with Attempts.
func WithAttempts(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptsKey{}, n)
}

// Attempts returns the number of attempts WithAttempts set on ctx, and
// whether it set a positive one.
func Attempts(ctx context.Context) (int, bool) {
	n, ok := ctx.Value(attemptsKey{}).(int)
	return n, ok && n > 0
}

// NewKey returns a fresh idempotency key ("k-", then ckpt.NewKey's time
// and random digits): what the spool gives a write that has none, so that
// a delivery repeated after a crash replays instead of appending twice.
func NewKey() string { return ckpt.NewKey("k-") }
