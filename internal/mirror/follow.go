package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/plan"
)

// FollowOptions tune Follow.
type FollowOptions struct {
	// Poll is how often a store without a change feed is listed for
	// changes; 0 is one second.
	Poll time.Duration
	// Written, when set, is told each checkpoint whose mirrors were
	// written (after the first full sync: every selected one).
	Written func(id string)
	// Synced, when set, is called once the first full sync is written,
	// before any change is followed.
	Synced func()
}

// Follow keeps the mirror files current with changes made anywhere to the
// store (other processes, other machines through a shared or remote
// store): it writes the mirrors of every selected checkpoint once, then
// those of each checkpoint that changes, until ctx is done (it then returns
// nil) or the store fails.
//
// With a store that has a change feed (ckpt.Watcher) every change is seen,
// in order, from the feed's head taken before the first full sync, so no
// change between the two is missed. Heartbeats are not in the feed: a
// mirror's last-beat fields are brought up to date by the next change. A
// store without a feed is listed every Poll and the checkpoints whose
// revision or last beat moved are written.
func (m *Store) Follow(ctx context.Context, o FollowOptions) error {
	w, hasFeed := m.Store.(ckpt.Watcher)
	var head string
	if hasFeed {
		var err error
		if head, err = w.Head(ctx); err != nil {
			return fmt.Errorf("reading the change feed's head: %w", err)
		}
	}
	seen, err := m.followSync(ctx, o)
	if err != nil {
		return err
	}
	if o.Synced != nil {
		o.Synced()
	}
	if hasFeed {
		err = w.Watch(ctx, head, func(ch ckpt.Change) error { return m.followChange(ctx, ch, o) })
	} else {
		err = m.poll(ctx, seen, o)
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// revBeat is what a poll compares: a checkpoint's revision and last beat.
type revBeat struct {
	rev  int64
	beat time.Time
}

// followSync writes every selected checkpoint's mirrors and returns the
// revisions and beats it wrote.
func (m *Store) followSync(ctx context.Context, o FollowOptions) (map[string]revBeat, error) {
	cs, err := m.selected(ctx, nil)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]revBeat, len(cs))
	for _, c := range cs {
		m.Write(ctx, c, nil)
		seen[c.ID] = revBeat{c.Rev, c.Heartbeat.LastBeat}
		if o.Written != nil {
			o.Written(c.ID)
		}
	}
	return seen, nil
}

// followChange writes the mirrors of the checkpoint one change made.
func (m *Store) followChange(ctx context.Context, ch ckpt.Change, o FollowOptions) error {
	if ch.Kind != ckpt.ChangeEvent || !m.selects(ch.ID) {
		return nil
	}
	c, err := m.Store.Get(ctx, ch.ID, 0)
	if errors.Is(err, ckpt.ErrNotFound) {
		return nil // deleted since
	}
	if err != nil {
		warn(m.opts, fmt.Sprintf("mirror of %s not written: %v", ch.ID, err))
		return nil
	}
	m.Write(ctx, c, m.changeEvent(ctx, ch))
	if o.Written != nil {
		o.Written(ch.ID)
	}
	return nil
}

// changeEvent returns the event of a change when Write needs it: a
// delivery (agent-checkpoints' (seed 002) last_inbox_check is its time),
// and a synced or imported change that came from a plan sync (so Write
// does not mirror it back to its plan); else nil. A change of unknown type
// (a poll's) is looked up too.
func (m *Store) changeEvent(ctx context.Context, ch ckpt.Change) *ckpt.Event {
	if ch.Type != "" && ch.Type != ckpt.EventSynced && ch.Type != ckpt.EventImported && ch.Type != ckpt.EventDelivered {
		return nil
	}
	events, err := m.Store.History(ctx, ch.ID, ch.Rev, 1)
	if err != nil || len(events) == 0 || events[0].Seq != ch.Rev {
		return nil
	}
	if events[0].Type == ckpt.EventDelivered {
		return &events[0]
	}
	var s struct {
		Source string `json:"source"`
	}
	if json.Unmarshal(events[0].Data, &s) != nil || !strings.HasPrefix(s.Source, plan.SourcePrefix) {
		return nil
	}
	return &events[0]
}

// poll lists the store every o.Poll and writes the mirrors of each
// selected checkpoint whose revision or last beat moved.
func (m *Store) poll(ctx context.Context, seen map[string]revBeat, o FollowOptions) error {
	every := o.Poll
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		sums, err := ckpt.ListAll(ctx, m.Store, ckpt.Filter{IncludeArchived: true})
		var damaged *ckpt.DamagedError
		if err != nil && !errors.As(err, &damaged) {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		for _, s := range sums {
			now := revBeat{s.Rev, s.Heartbeat.LastBeat}
			if !m.selects(s.ID) || seen[s.ID] == now {
				continue
			}
			seen[s.ID] = now
			if err := m.followChange(ctx, ckpt.Change{Kind: ckpt.ChangeEvent, ID: s.ID, Rev: s.Rev}, o); err != nil {
				return err
			}
		}
	}
}
