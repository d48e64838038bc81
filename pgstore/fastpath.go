package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// The fast path of Append: a Store remembers the last state it wrote for
// each checkpoint (its revision, last checksum and decoded state). The
// next append to that checkpoint is sealed and applied in Go against the
// remembered state and written by ONE statement, in one round trip, that
// updates the state row only WHERE its rev and last_sum are still the
// remembered ones (and the event's key is not among the last
// ckpt.KeyWindow events), and inserts the event, the change and the key
// from that update's result. When anything else wrote to the checkpoint
// meanwhile, the update matches no row, nothing is written, and the
// append runs the locking path (appendOnce), which then remembers the
// state it wrote. docs/design.md has the argument that both paths keep
// every invariant of the locking one.

// stateCacheSize bounds how many checkpoints' states a Store remembers;
// past it an arbitrary entry is forgotten (its next append takes the
// locking path once).
const stateCacheSize = 1024

// contendedFor is how long a checkpoint that several writers were seen
// appending to at once takes the locking path only: there, writers queue
// on the row lock instead of each paying for a fast attempt that misses.
const contendedFor = time.Second

// known is what a Store remembers of one checkpoint.
type known struct {
	rev     int64
	lastSum string
	state   *ckpt.Checkpoint // fold(events) without liveness; owned by the cache
}

// cached is a cache entry: what is known, and whether an append through
// this Store is using it.
type cached struct {
	known
	busy bool
}

// stateCache maps checkpoint IDs to what this Store last wrote there, and
// remembers which checkpoints are contended.
type stateCache struct {
	mu        sync.Mutex
	m         map[string]cached
	contended map[string]time.Time // until when
}

// take returns id's entry for an append to use, its state the caller's
// to change; false when there is none, it is in use (a second append to
// one checkpoint through one Store at once, which marks it contended), or
// the checkpoint is contended.
func (c *stateCache) take(id string) (known, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if until, hot := c.contended[id]; hot {
		if time.Now().Before(until) {
			return known{}, false
		}
		delete(c.contended, id)
	}
	if !ok {
		return known{}, false
	}
	if e.busy {
		c.markContended(id)
		return known{}, false
	}
	e.busy = true
	c.m[id] = e
	return e.known, true
}

// put remembers k for id; k.state becomes the cache's.
func (c *stateCache) put(id string, k known) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(id, k)
}

func (c *stateCache) putLocked(id string, k known) {
	if c.m == nil {
		c.m = make(map[string]cached)
	}
	if _, ok := c.m[id]; !ok && len(c.m) >= stateCacheSize {
		for other := range c.m {
			delete(c.m, other)
			break
		}
	}
	c.m[id] = cached{known: k}
}

// offer remembers k for id, with its state copied by clone, unless an
// entry for id is in use or at least as new (a state read, as by Get,
// must not replace a newer one this Store wrote).
func (c *stateCache) offer(id string, k known, clone func() *ckpt.Checkpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok && (e.busy || e.rev >= k.rev) {
		return
	}
	k.state = clone()
	c.putLocked(id, k)
}

// forget drops id's entry (a fast attempt that missed, Delete, Repair);
// contended marks the checkpoint contended too.
func (c *stateCache) forget(id string, contended bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
	if contended {
		c.markContended(id)
	}
}

func (c *stateCache) markContended(id string) {
	if c.contended == nil {
		c.contended = make(map[string]time.Time)
	}
	if len(c.contended) >= stateCacheSize {
		now := time.Now()
		for other, until := range c.contended {
			if now.After(until) {
				delete(c.contended, other)
			}
		}
		if len(c.contended) >= stateCacheSize {
			return
		}
	}
	c.contended[id] = time.Now().Add(contendedFor)
}

// dbClock estimates the database server's clock between readings: the
// last clock_timestamp() a statement returned, advanced by this process's
// monotonic clock since. Every append (either path) reads it again.
type dbClock struct {
	mu      sync.Mutex
	db      time.Time // the server's clock as last read
	localAt time.Time // when it was read here (monotonic)
}

func (c *dbClock) set(db time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.db, c.localAt = db, time.Now()
}

// now returns the estimate, and false before the first reading.
func (c *dbClock) now() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db.IsZero() {
		return time.Time{}, false
	}
	return c.db.Add(time.Since(c.localAt)).UTC(), true
}

// errStale means the fast path could not be used: the event does not
// apply to the remembered state, or IfRev is not its revision. The locking
// path decides. errContended: the statement matched no row, the
// remembered state is not the checkpoint's (mostly another writer; also a
// replayed key, a deletion).
var (
	errStale     = errors.New("pgstore: the fast path does not apply")
	errContended = errors.New("pgstore: remembered state is stale")
)

// fastAppend appends e after the remembered state k in one statement
// (batch.go), or returns errStale or errContended having written nothing.
// Other errors are the statement's (a lost connection: the append may
// have been applied).
func (s *Store) fastAppend(ctx context.Context, id string, k known, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if opts.IfRev != 0 && opts.IfRev != k.rev {
		return ckpt.AppendResult{}, errStale // the locking path says whether it is a conflict
	}
	now, skewBound, ok := s.fastNow()
	if !ok {
		return ckpt.AppendResult{}, errStale
	}
	stored, line, err := seal(opts.Attribute(k.state, e), current{rev: k.rev, lastSum: k.lastSum}, now)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	next, err := ckpt.Apply(id, k.state, stored)
	if err != nil {
		return ckpt.AppendResult{}, errStale // refused against what may be stale: let the lock decide
	}
	buf := rowBuffers.Get().(*[]byte)
	row, b, err := appendRow(*buf, next)
	*buf = b
	if err != nil {
		rowBuffers.Put(buf)
		return ckpt.AppendResult{}, err
	}
	res, written := s.submit(ctx, &fastRow{id: id, rev: k.rev, lastSum: k.lastSum, event: stored, key: indexedKey(e.Key, opts), line: line, row: row, checkAt: skewBound})
	if written {
		rowBuffers.Put(buf) // else the batch may still be reading it
	}
	if res.err != nil {
		return ckpt.AppendResult{}, res.err
	}
	if !res.matched {
		return ckpt.AppendResult{}, errContended
	}
	dbNow, beat, presence := res.dbNow, res.beat, res.presence
	s.dbNow.set(dbNow)
	s.fast.Add(1)       // readers were told by writeBatch
	out := next.Clone() // before the cache has next: another append may take it
	s.cache.put(id, known{rev: stored.Seq, lastSum: stored.Sum, state: next})
	if err := fillLiveness(out, beat, presence); err != nil {
		return ckpt.AppendResult{}, err
	}
	return ckpt.AppendResult{State: out, Event: stored}, nil
}

// fastNow returns the time the fast path seals an event with, and whether
// the statement must check the event's time against the server's clock:
// the clock SetClock gave (no check: it is the store's clock), else the
// estimate of the server's (checked). false: no estimate yet.
func (s *Store) fastNow() (now time.Time, check, ok bool) {
	s.mu.RLock()
	set := s.now
	s.mu.RUnlock()
	if set != nil {
		return set().UTC(), false, true
	}
	now, ok = s.dbNow.now()
	return now, true, ok
}
