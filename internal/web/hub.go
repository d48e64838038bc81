package web

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// hubRing is how many recent changes the hub keeps for pages that join or
// fall behind; a page further behind catches up on its own store watch.
const hubRing = 4096

// hubBatch is the least time between two deliveries to one page: under a
// burst of writes each page wakes 20 times a second and takes what came
// meanwhile, instead of waking once per change per page.
const hubBatch = 50 * time.Millisecond

// hub is the one store watch that every open page shares: a hundred pages
// cost one read of the feed per change, not a hundred. It runs while some
// page listens, from the feed's head when it started.
//
// Cursors are opaque, so a page joins the hub only at a cursor the hub has
// seen: its start, or a change it holds. A page that starts elsewhere (a
// reconnect from long ago, a cursor read before the hub started) watches
// the store itself until its own feed reaches such a cursor, then joins.
type hub struct {
	store ckpt.Store
	// row returns the overview row of checkpoint id as JSON, nil when it
	// cannot be read: each change carries its row, read once for every
	// page, so no page fetches it (nil: changes carry no row).
	row func(ctx context.Context, id string) []byte

	mu      sync.Mutex
	gen     int // counts the hub's watches, so a finished one changes nothing
	running bool
	stop    context.CancelFunc
	users   int
	start   string         // the head the hub's watch began at
	base    int            // the index of ring[0] in the hub's sequence
	ring    []frame        // the latest changes, oldest first
	index   map[string]int // cursor → sequence index, for the ring's changes
	wake    chan struct{}  // closed and replaced at each change
	err     error          // why the hub's watch ended
}

// join registers a page; leave must be called when it goes.
func (h *hub) join(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users++
	if h.running {
		return nil
	}
	start, err := h.store.Head(ctx)
	if err != nil {
		h.users--
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	h.gen++
	h.running, h.stop, h.start, h.err = true, cancel, start, nil
	h.base, h.ring, h.index, h.wake = 0, nil, map[string]int{}, make(chan struct{})
	go h.run(wctx, h.gen, start)
	return nil
}

func (h *hub) leave() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.users--
	if h.users == 0 && h.running {
		h.stop()
		h.running = false
	}
}

func (h *hub) run(ctx context.Context, gen int, start string) {
	err := h.store.Watch(ctx, start, func(c ckpt.Change) error {
		f := h.frameOf(ctx, c) // outside the lock: it may read the store
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.gen != gen {
			return context.Canceled
		}
		h.index[c.Cursor] = h.base + len(h.ring)
		h.ring = append(h.ring, f)
		if len(h.ring) > hubRing {
			delete(h.index, h.ring[0].cursor)
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
		return // stopped: the last page left
	}
	// The store's feed failed: the pages listening end with the error (and
	// reconnect); the next page to join starts a new watch.
	h.err, h.running = err, false
	h.stop()
	close(h.wake)
	h.wake = make(chan struct{})
}

// position returns the hub's generation and the sequence index just after
// cursor, if the hub can serve a page from there.
func (h *hub) position(cursor string) (gen, i int, ok bool) {
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

// next returns the changes from sequence index i on, and a channel closed
// when there are more. ok is false when the page fell out of the ring, or
// the hub's watch ended (err says why).
func (h *hub) next(gen, i int) (fs []frame, more <-chan struct{}, ok bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen {
		return nil, nil, false, nil // a new watch: its indices are not ours
	}
	if !h.running {
		return nil, nil, false, h.err
	}
	if i < h.base {
		return nil, nil, false, nil
	}
	if n := i - h.base; n < len(h.ring) {
		fs = append(fs, h.ring[n:]...)
	}
	return fs, h.wake, true, nil
}

// follow calls fn with every change after cursor from, in order and in
// batches, until ctx ends or fn fails: from the hub where it can, from the
// store itself until then (and again if the page falls too far behind).
func (h *hub) follow(ctx context.Context, from string, fn func([]frame) error) error {
	if err := h.join(ctx); err != nil {
		return err
	}
	defer h.leave()
	last := from
	for {
		if gen, i, ok := h.position(last); ok {
			err := h.serve(ctx, gen, i, func(fs []frame) error {
				last = fs[len(fs)-1].cursor
				return fn(fs)
			})
			if err != nil {
				return err
			}
			continue // fell out of the ring: catch up on the store
		}
		err := h.store.Watch(ctx, last, func(c ckpt.Change) error {
			if err := fn([]frame{h.frameOf(ctx, c)}); err != nil {
				return err
			}
			last = c.Cursor
			if _, _, ok := h.position(last); ok {
				return errJoin
			}
			return nil
		})
		if err != errJoin {
			return err
		}
	}
}

// errJoin ends a page's own store watch when it reaches the hub.
var errJoin = joinError{}

type joinError struct{}

func (joinError) Error() string { return "joined the shared feed" }

// serve delivers the hub's changes from index i of watch gen until ctx
// ends or fn fails (its error), or the page falls out of the ring or the
// watch ended (nil, or the feed's error).
func (h *hub) serve(ctx context.Context, gen, i int, fn func([]frame) error) error {
	for {
		fs, more, ok, err := h.next(gen, i)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if len(fs) > 0 {
			if err := fn(fs); err != nil {
				return err
			}
			i += len(fs)
			select { // let the next changes gather
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(hubBatch):
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

// frame is one change as a page's stream sends it, encoded once for all
// pages.
type frame struct {
	cursor string
	id     string // the checkpoint's ID
	bytes  []byte
}

// changeOut is a change as the page reads it: the change, and for an
// event the checkpoint's row as it was read after the change.
type changeOut struct {
	ckpt.Change
	Row json.RawMessage `json:"row,omitempty"`
}

func (h *hub) frameOf(ctx context.Context, c ckpt.Change) frame {
	out := changeOut{Change: c}
	if c.Kind == ckpt.ChangeEvent && h.row != nil {
		out.Row = h.row(ctx, c.ID)
	}
	b, _ := json.Marshal(out)
	return frame{cursor: c.Cursor, id: c.ID, bytes: fmt.Appendf(nil, "id: %s\nevent: change\ndata: %s\n\n", c.Cursor, b)}
}

// coalesce returns the events of frames fs as one write: only the last
// change of each checkpoint (each change carries the whole row, so an
// earlier one of the same checkpoint says nothing the later does not),
// in feed order. The last change is always kept, so a reconnect resumes
// (Last-Event-ID) after everything written.
func coalesce(fs []frame) []byte {
	if len(fs) == 1 {
		return fs[0].bytes
	}
	last := make(map[string]int, len(fs))
	n := 0
	for i, f := range fs {
		last[f.id] = i
		n += len(f.bytes)
	}
	out := make([]byte, 0, n)
	for i, f := range fs {
		if last[f.id] == i {
			out = append(out, f.bytes...)
		}
	}
	return out
}
