// Package feed carries a store's change feed over HTTP, both ends: the
// Hub that shares one store watch among every stream a server process
// serves (the API's /v1/changes, the dashboard's pages), the server-sent
// events those streams write (Writer, Frame) and the reader the remote
// client parses them with (Read).
//
// A server process watches its store once, whatever the number of
// streams: the hub keeps the latest changes in a ring, and each stream
// reads the ring at its own pace from its own cursor. Writers never wait
// for a stream; a stream that falls further behind than the ring holds
// is cut off (ErrBehind) and its client resumes with Last-Event-ID.
package feed

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// DefaultRing is how many recent changes a hub keeps for streams that
// join or lag.
const DefaultRing = 4096

// DefaultBatch is the least time between two deliveries to one stream:
// under a burst of writes each stream wakes at most 4 times a second and
// takes what came meanwhile, instead of once per change per stream.
const DefaultBatch = 250 * time.Millisecond

// MaxDeliver is the most changes a stream is handed at once: a burst (a
// thousand agents starting, a stream joining far back) reaches it in
// pieces of this many, one after the other without the batch's wait, so
// no stream encodes (and holds) a whole burst in one buffer.
const MaxDeliver = 64

// ErrBehind ends a stream that fell further behind the feed than the hub
// keeps: its client reconnects from the last change it got (Last-Event-ID)
// and misses nothing. It is ckpt.ErrUnavailable, so clients retry.
var ErrBehind error = &behind{}

// behind is ErrBehind's type: fmt.Errorf("%w: …", ckpt.ErrUnavailable) as
// static data, since a package-level fmt.Errorf runs at initialisation in
// every ckpt process (docs/design.md, start-up round eight).
type behind struct{}

func (*behind) Error() string {
	return ckpt.ErrUnavailable.Error() + ": this stream fell too far behind the change feed; reconnect with Last-Event-ID to resume"
}
func (*behind) Unwrap() error { return ckpt.ErrUnavailable }

// Hub is the one store watch a server process runs, shared by every
// stream. It watches while some stream follows it, from the feed's head
// when it started; it is safe for concurrent use.
//
// Cursors are opaque, so a stream joins the hub only at a cursor the hub
// has seen: its start or a change it holds. A stream that starts
// elsewhere (a reconnect from long ago, the feed's start) reads the store
// itself until its own feed reaches such a cursor, then joins.
type Hub struct {
	store ckpt.Watcher
	size  int
	batch time.Duration

	mu      sync.Mutex
	gen     int // counts the hub's watches, so a finished one changes nothing
	running bool
	stop    context.CancelFunc
	users   int
	start   string         // the head the hub's watch began at
	base    int            // the index of ring[0] in the watch's sequence
	ring    []*Item        // the latest changes, oldest first
	index   map[string]int // cursor → sequence index, for the ring's changes
	wake    chan struct{}  // closed and replaced at each change
	err     error          // why the hub's watch ended
}

// New returns a hub over store's feed that keeps ring changes (0 means
// DefaultRing) and delivers to a stream at most once per batch (0 means
// DefaultBatch).
func New(store ckpt.Watcher, ring int, batch time.Duration) *Hub {
	if ring <= 0 {
		ring = DefaultRing
	}
	if batch <= 0 {
		batch = DefaultBatch
	}
	return &Hub{store: store, size: ring, batch: batch}
}

// Item is one change as the hub holds it, shared by every stream: what a
// stream derives from it (its encoding, the dashboard's row) is made once
// for all of them with Memo.
type Item struct {
	ckpt.Change
	mu   sync.Mutex
	memo []memo
}

type memo struct {
	key any
	val []byte
}

// Memo returns the value fn made for key on the first call; every later
// call with key, from any stream, gets the same bytes without calling fn.
func (it *Item) Memo(key any, fn func() []byte) []byte {
	it.mu.Lock()
	defer it.mu.Unlock()
	for _, m := range it.memo {
		if m.key == key {
			return m.val
		}
	}
	v := fn()
	it.memo = append(it.memo, memo{key, v})
	return v
}

// join registers a stream and returns the hub's end as it joins, under
// the same lock: a stream from ckpt.CursorNow starts there, so every change
// the hub takes after the stream is counted among its users is the
// stream's. leave must be called when it goes.
func (h *Hub) join(ctx context.Context) (end string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users++
	if h.running {
		return h.end(), nil
	}
	start, err := h.store.Head(ctx)
	if err != nil {
		h.users--
		return "", err
	}
	wctx, cancel := context.WithCancel(context.Background())
	h.gen++
	h.running, h.stop, h.start, h.err = true, cancel, start, nil
	h.base, h.ring, h.index, h.wake = 0, nil, map[string]int{}, make(chan struct{})
	go h.run(wctx, h.gen, start)
	return h.end(), nil
}

func (h *Hub) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users--
	if h.users == 0 && h.running {
		h.stop()
		h.running = false
	}
}

func (h *Hub) run(ctx context.Context, gen int, start string) {
	err := h.store.Watch(ctx, start, func(c ckpt.Change) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.gen != gen {
			return context.Canceled
		}
		h.index[c.Cursor] = h.base + len(h.ring)
		h.ring = append(h.ring, &Item{Change: c})
		if len(h.ring) > h.size {
			delete(h.index, h.ring[0].Cursor)
			h.ring[0] = nil
			h.ring = h.ring[1:]
			h.base++
		}
		close(h.wake)
		h.wake = make(chan struct{})
		return nil
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen || ctx.Err() != nil {
		return // stopped: the last stream left
	}
	// The store's feed failed: the streams end with the error (and their
	// clients reconnect); the next stream to join starts a new watch.
	h.err, h.running = err, false
	h.stop()
	close(h.wake)
	h.wake = make(chan struct{})
}

// position returns the hub's generation and the sequence index just after
// cursor, if the hub can serve a stream from there.
func (h *Hub) position(cursor string) (gen, i int, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.running {
		return 0, 0, false
	}
	if cursor == h.start && h.base == 0 {
		return h.gen, 0, true
	}
	i, ok = h.index[cursor]
	return h.gen, i + 1, ok
}

// end returns the cursor of the hub's current end ("" when it is not
// running). h.mu is held.
func (h *Hub) end() string {
	switch {
	case !h.running:
		return ""
	case len(h.ring) > 0:
		return h.ring[len(h.ring)-1].Cursor
	}
	return h.start
}

// next returns the changes from sequence index i on, at most MaxDeliver
// of them (rest says whether the ring holds more), and a channel closed
// when there are more. ok is false when the stream fell out of the ring
// (err is ErrBehind) or the hub's watch ended (err says why, nil for a new
// watch whose indices are not the stream's).
func (h *Hub) next(gen, i int) (items []*Item, rest bool, more <-chan struct{}, ok bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen {
		return nil, false, nil, false, nil
	}
	if !h.running {
		return nil, false, nil, false, h.err
	}
	if i < h.base {
		return nil, false, nil, false, ErrBehind
	}
	if n := i - h.base; n < len(h.ring) {
		end := min(len(h.ring), n+MaxDeliver)
		items, rest = append(items, h.ring[n:end]...), end < len(h.ring)
	}
	return items, rest, h.wake, true, nil
}

// Follow calls fn with every change after cursor from ("" is the feed's
// start, ckpt.CursorNow its current end), in order and in batches, until
// ctx ends (ctx.Err()), fn fails (its error), the store's feed fails (its
// error) or the stream falls behind the ring (ErrBehind). fn runs on
// Follow's goroutine; a slow fn delays only its own stream.
func (h *Hub) Follow(ctx context.Context, from string, fn func([]*Item) error) error {
	end, err := h.join(ctx)
	if err != nil {
		return err
	}
	defer h.leave()
	last := from
	if from == ckpt.CursorNow {
		last = end
	}
	for {
		if gen, i, ok := h.position(last); ok {
			err := h.serve(ctx, gen, i, func(items []*Item) error {
				last = items[len(items)-1].Cursor
				return fn(items)
			})
			if err != nil {
				return err
			}
			continue // a new watch of the hub: catch up on the store
		}
		err := h.store.Watch(ctx, last, func(c ckpt.Change) error {
			if err := fn([]*Item{{Change: c}}); err != nil {
				return err
			}
			last = c.Cursor
			if _, _, ok := h.position(last); ok {
				return errJoin
			}
			return nil
		})
		if !errors.Is(err, errJoin) {
			return err
		}
	}
}

// errJoin ends a stream's own store watch when it reaches the hub.
var errJoin = errors.New("joined the shared feed")

// serve delivers the hub's changes from index i of watch gen until ctx
// ends or fn fails (its error), the stream falls out of the ring
// (ErrBehind) or the watch ended (nil, or the feed's error).
func (h *Hub) serve(ctx context.Context, gen, i int, fn func([]*Item) error) error {
	for {
		items, rest, more, ok, err := h.next(gen, i)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if len(items) > 0 {
			if err := fn(items); err != nil {
				return err
			}
			i += len(items)
			if rest {
				continue // the rest of a burst, at once
			}
			t := time.NewTimer(h.batch) // let the next changes gather
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-more:
		}
	}
}
