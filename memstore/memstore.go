// Package memstore is an in-memory ckpt.Store: a map and a mutex. It keeps
// the same contract as the durable backends (chained checksums, dense
// revisions, compare-and-swap, idempotency keys) but nothing survives the
// process. Use it in tests and for throw-away stores.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Store is an in-memory ckpt.Store. The zero value is not usable; call New.
// It is safe for concurrent use by many goroutines.
type Store struct {
	mu  sync.RWMutex
	cps map[string]*record
	// feed is every change in order; feed[i] has cursor i+1.
	feed []ckpt.Change
	// wake is closed and replaced on every change, waking watchers.
	wake chan struct{}
	// now is the store's clock (time.Now unless a test sets it).
	now func() time.Time
}

// record is one checkpoint: its history, its folded state and its last beat.
type record struct {
	events []ckpt.Event
	state  *ckpt.Checkpoint // fold(events); never handed out, only clones
	beat   time.Time
	seen   ckpt.Presence
}

// liveness fills c's heartbeat from the record's liveness.
func (r *record) liveness(c *ckpt.Checkpoint) {
	c.Heartbeat.LastBeat = r.beat
	c.Heartbeat.Presence = nil
	if !r.seen.IsZero() {
		p := r.seen
		if p.Process != nil {
			pr := *p.Process
			p.Process = &pr
		}
		c.Heartbeat.Presence = &p
	}
}

var (
	_ ckpt.Store   = (*Store)(nil)
	_ ckpt.Watcher = (*Store)(nil)
)

// New returns an empty store.
func New() *Store {
	return &Store{cps: map[string]*record{}, wake: make(chan struct{}), now: time.Now}
}

// SetClock makes now the store's clock: the time events and beats get when
// they carry none, and the bound of clock skew (ckpt.MaxClockSkew). nil
// means time.Now.
func (s *Store) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Append implements ckpt.Store. It checks, in order: the ID, a repeated
// idempotency key among the last ckpt.KeyWindow events (which replays the
// first result, whatever the event and opts), opts.IfRev, then Apply on a copy
// of the state, so that a refused event changes nothing.
func (s *Store) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if err := begin(ctx, id); err != nil {
		return ckpt.AppendResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.cps[id]
	var cur *ckpt.Checkpoint
	var last ckpt.Event
	if r != nil {
		cur, last = r.state, r.events[len(r.events)-1]
		if e.Key != "" {
			if i := keyIndex(r.events, e.Key); i >= 0 {
				st, err := ckpt.Fold(id, r.events[:i+1])
				if err != nil {
					return ckpt.AppendResult{}, fmt.Errorf("memstore: replaying %s to event %d: %w", id, i+1, err)
				}
				r.liveness(st)
				return ckpt.AppendResult{State: st, Event: copyEvent(r.events[i]), Replayed: true}, nil
			}
		}
	}
	if err := checkRev(id, cur, opts.IfRev); err != nil {
		return ckpt.AppendResult{}, err
	}
	stored, err := seal(opts.Attribute(cur, e), last, s.now())
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	var before *ckpt.Checkpoint
	if cur != nil {
		before = cur.Clone()
	}
	next, err := ckpt.Apply(id, before, stored)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if r == nil {
		r = &record{}
		s.cps[id] = r
	}
	r.events = append(r.events, stored)
	r.state = next
	s.publish(ckpt.Change{Kind: ckpt.ChangeEvent, ID: id, Rev: stored.Seq, Type: stored.Type, At: stored.At})
	out := next.Clone()
	r.liveness(out)
	return ckpt.AppendResult{State: out, Event: copyEvent(stored)}, nil
}

// keyIndex returns the index of the event with key among the last
// ckpt.KeyWindow events, or -1.
func keyIndex(events []ckpt.Event, key string) int {
	for i := len(events) - 1; i >= 0 && i >= len(events)-ckpt.KeyWindow; i-- {
		if events[i].Key == key {
			return i
		}
	}
	return -1
}

// checkRev is the compare-and-swap of AppendOptions.IfRev.
func checkRev(id string, cur *ckpt.Checkpoint, ifRev int64) error {
	switch {
	case ifRev < 0:
		return fmt.Errorf("%w: if-rev %d is negative: give the revision you read, or 0 for none", ckpt.ErrInvalid, ifRev)
	case ifRev == 0:
		return nil
	case cur == nil:
		return fmt.Errorf("%w: %s does not exist, though revision %d was expected", ckpt.ErrNotFound, id, ifRev)
	case cur.Rev != ifRev:
		return &ckpt.ConflictError{ID: id, Want: ifRev, Have: cur.Rev}
	}
	return nil
}

// seal numbers e after last (the zero Event for the first) and returns it as
// a history line would decode, so that the stored event and its checksum are
// exactly what a file backend would keep.
func seal(e ckpt.Event, last ckpt.Event, now time.Time) (ckpt.Event, error) {
	e.Seq, e.Prev, e.Sum = last.Seq+1, last.Sum, ""
	if e.At.IsZero() {
		e.At = now
	}
	e.At = ckpt.ClampTime(e.At, now, ckpt.MaxClockSkew)
	e.At = e.At.UTC()
	line, _, err := ckpt.EncodeLine(e)
	if err != nil {
		return ckpt.Event{}, fmt.Errorf("%w: %v", ckpt.ErrInvalid, err)
	}
	return ckpt.DecodeLine(line)
}

// Get implements ckpt.Store. A negative rev fails with ckpt.ErrInvalid.
func (s *Store) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	if err := begin(ctx, id); err != nil {
		return nil, err
	}
	if rev < 0 {
		return nil, fmt.Errorf("%w: revision %d of %s is negative: 0 is the latest, revisions count from 1", ckpt.ErrInvalid, rev, id)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.find(id)
	if err != nil {
		return nil, err
	}
	var c *ckpt.Checkpoint
	switch n := int64(len(r.events)); {
	case rev == 0 || rev == n:
		c = r.state.Clone()
	case rev > n:
		return nil, fmt.Errorf("%w: %s has %d revisions, not %d", ckpt.ErrNotFound, id, n, rev)
	default:
		if c, err = ckpt.Fold(id, r.events[:rev]); err != nil {
			return nil, fmt.Errorf("memstore: folding %s to revision %d: %w", id, rev, err)
		}
	}
	r.liveness(c)
	return c, nil
}

// History implements ckpt.Store. A from below 1 returns the whole history; a
// from past the last event returns none.
func (s *Store) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	if err := begin(ctx, id); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.find(id)
	if err != nil {
		return nil, err
	}
	out := []ckpt.Event{}
	for _, e := range r.events {
		if limit > 0 && len(out) == limit {
			break
		}
		if e.Seq >= from {
			out = append(out, copyEvent(e))
		}
	}
	return out, nil
}

// List implements ckpt.Store. The cursor is the last ID of the page.
func (s *Store) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	if err := ctx.Err(); err != nil {
		return ckpt.Page{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.cps))
	for id := range s.cps {
		if id > opts.After {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	page := ckpt.Page{Items: []ckpt.Summary{}}
	for _, id := range ids {
		r := s.cps[id]
		c := *r.state // shallow: Summary copies what it keeps
		r.liveness(&c)
		sum := c.Summary()
		if !opts.MatchSummary(&sum) {
			continue
		}
		if opts.Limit > 0 && len(page.Items) == opts.Limit {
			page.Next = page.Items[len(page.Items)-1].ID
			break
		}
		page.Items = append(page.Items, sum)
	}
	return page, nil
}

// Beat implements ckpt.Store. A zero at means now; see ckpt.NextBeat.
func (s *Store) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	if err := begin(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.find(id)
	if err != nil {
		return err
	}
	r.beat = ckpt.NextBeat(r.beat, sig.At, s.now())
	r.seen = r.seen.ApplySignal(sig, r.beat)
	return nil
}

// Delete implements ckpt.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := begin(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.find(id)
	if err != nil {
		return err
	}
	if r.state.Archived == nil {
		return fmt.Errorf("%w: %s is not archived; only archived checkpoints can be deleted", ckpt.ErrInvalid, id)
	}
	delete(s.cps, id)
	s.publish(ckpt.Change{Kind: ckpt.ChangeDeleted, ID: id, At: s.now().UTC()})
	return nil
}

// Close does nothing: the store stays usable and keeps its contents.
func (s *Store) Close() error { return nil }

func (s *Store) find(id string) (*record, error) {
	r := s.cps[id]
	if r == nil {
		return nil, fmt.Errorf("%w: %s", ckpt.ErrNotFound, id)
	}
	return r, nil
}

// begin checks what every method checks first: the context and the ID.
func begin(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ckpt.ValidateID(id)
}

// copyEvent returns e with its own copy of Data, so callers cannot change
// the stored history.
func copyEvent(e ckpt.Event) ckpt.Event {
	e.Data = slices.Clone(e.Data)
	return e
}
