package webhook

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/backoff"
)

// Options configure a Notifier. Store and Targets are required.
type Options struct {
	Store   ckpt.Store
	Targets []Target
	// Secret signs every body (HeaderSignature); nil sends none.
	Secret []byte
	// Tick is how often the live checkpoints are judged again (what time
	// and heartbeats change); 0 means 10 s.
	Tick       time.Duration
	Thresholds ckpt.Thresholds
	Alive      ckpt.AliveFunc
	Now        func() time.Time
	// Backoff paces the retries of a failed delivery (the module's one
	// backoff, with jitter); the zero value means from 1 s doubling up to
	// 10 min.
	Backoff backoff.Policy
	// Retries bounds the retries of one delivery; 0 means 5 (six attempts
	// in all, over about 16 minutes).
	Retries int
	// QueueSize bounds the transitions waiting for one target; 0 means
	// 1000. Past it a transition is dropped and counted.
	QueueSize int
	Client    *http.Client
	Count     Counter
	Warn      func(string)
	// Memory keeps what was told across restarts (FileMemory next to a
	// local store, PGMemory in a PostgreSQL one); nil remembers nothing,
	// and each start takes what it finds as its baseline.
	Memory Memory
}

// Notifier judges the store's checkpoints and tells the targets about
// each transition. Run drives it.
type Notifier struct {
	opts    Options
	senders []*sender
	last    map[string]ckpt.PresenceState
	dirty   map[string]ckpt.PresenceState // judged, not yet saved to Memory
	lease   leadership                    // whether this process tells (lease.go)
	ready   chan struct{}                 // closed after Run's first look
}

type nopCounter struct{}

func (nopCounter) Count(string) {}

// New returns a Notifier for opts.
func New(opts Options) (*Notifier, error) {
	if opts.Store == nil || len(opts.Targets) == 0 {
		return nil, fmt.Errorf("%w: a notifier needs a store and at least one webhook", ckpt.ErrInvalid)
	}
	if opts.Tick <= 0 {
		opts.Tick = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Backoff == (backoff.Policy{}) {
		opts.Backoff = backoff.Policy{First: time.Second, Max: 10 * time.Minute}
	}
	if opts.Retries <= 0 {
		opts.Retries = 5
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 1000
	}
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Count == nil {
		opts.Count = nopCounter{}
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	n := &Notifier{opts: opts, last: map[string]ckpt.PresenceState{}, dirty: map[string]ckpt.PresenceState{}, ready: make(chan struct{})}
	n.lease.init(opts.Store)
	for _, t := range opts.Targets {
		n.senders = append(n.senders, &sender{t: t, queue: make(chan Event, opts.QueueSize), secret: opts.Secret,
			client: opts.Client, backoff: opts.Backoff, retries: opts.Retries, count: opts.Count, warn: opts.Warn,
			done: make(chan struct{})})
	}
	return n, nil
}

// liveStatuses are the statuses whose state time can change.
var liveStatuses = []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}

// Run takes the feed's end, judges every checkpoint once, then follows the
// change feed and looks at the live checkpoints on every tick, until ctx
// is done. The first look tells what changed since the states its Memory
// holds (what happened while the server was down); without a Memory, or
// at the first start, it tells nothing: what was true before is not a
// transition. A feed or listing that fails is retried at the next tick;
// Run returns only when ctx is done. Over a store shared by several
// servers (a ckpt.Leader) every server judges, and only the one holding
// the "webhooks" lease tells (lease.go) and records what it told.
func (n *Notifier) Run(ctx context.Context) error {
	for _, s := range n.senders {
		go s.run(ctx)
	}
	defer n.stop(ctx)
	gained := n.lease.run(ctx, n.opts.Tick, n.opts.Warn)
	head, err := n.opts.Store.Head(ctx)
	for err != nil {
		n.opts.Warn("webhooks: reading the change feed's end: " + err.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(n.opts.Tick):
		}
		head, err = n.opts.Store.Head(ctx)
	}
	remembered := n.recall(ctx)
	n.look(ctx, ckpt.Filter{}, remembered)
	if n.opts.Memory != nil && !remembered {
		n.dirty = maps.Clone(n.last) // the baseline, saved even when empty
	}
	n.save(ctx, !remembered)
	close(n.ready)
	changed := make(chan string, 256)
	go n.follow(ctx, head, changed)
	tick := time.NewTicker(n.opts.Tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case id := <-changed:
			n.read(ctx, id)
		case <-tick.C:
			n.look(ctx, ckpt.Filter{Status: liveStatuses}, true)
		case <-gained:
			n.tellHeld(n.opts.Now().UTC())
		}
		n.save(ctx, false)
	}
}

// stop waits for the senders to end (ctx is done) and records in the
// Memory, for each checkpoint with a transition they did not deliver, the
// state before its first such transition: the next start tells it then.
func (n *Notifier) stop(ctx context.Context) {
	undo := map[string]ckpt.PresenceState{}
	for _, s := range n.senders {
		<-s.done
		for _, e := range s.unsent {
			if _, ok := undo[e.ID]; !ok {
				undo[e.ID] = e.From
			}
		}
	}
	if n.opts.Memory == nil || len(undo) == 0 && len(n.dirty) == 0 {
		return
	}
	maps.Copy(n.dirty, undo)
	n.save(ctx, false)
}

// recall loads the Memory's states as the baseline, retrying at each tick
// until it answers; false when there is none (no Memory, a first start).
func (n *Notifier) recall(ctx context.Context) bool {
	if n.opts.Memory == nil {
		return false
	}
	for {
		states, ok, err := n.opts.Memory.Load(ctx)
		if err == nil {
			n.last = states
			return ok
		}
		n.opts.Warn("webhooks: reading what was told before: " + err.Error())
		select {
		case <-ctx.Done():
			return false
		case <-time.After(n.opts.Tick):
		}
	}
}

// save records the states judged since the last save in the Memory,
// after they were handed to the senders: killed in between, a restart
// tells them again (under the same delivery ID), never loses them. A
// failure keeps them for the next save. force saves even none (the
// first start's baseline marks that there is a memory).
func (n *Notifier) save(ctx context.Context, force bool) {
	if n.opts.Memory == nil || len(n.dirty) == 0 && !force {
		return
	}
	// What was told is recorded even as Run stops: not recorded, it would
	// be told again at the next start.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := n.opts.Memory.Save(ctx, n.dirty); err != nil {
		n.opts.Warn("webhooks: recording what was told: " + err.Error())
		return
	}
	clear(n.dirty)
}

// remember marks id's new state st for the Memory, when this server is
// the one that tells.
func (n *Notifier) remember(id string, st ckpt.PresenceState) {
	if n.opts.Memory != nil && n.lease.leading.Load() {
		n.dirty[id] = st
	}
}

// Ready is closed once Run has judged every checkpoint for the first
// time (its baseline): a change after that is a transition it tells. Run
// may be called once.
func (n *Notifier) Ready() <-chan struct{} { return n.ready }

// follow sends the ID of every change after cursor to changed, resuming
// after a failure.
func (n *Notifier) follow(ctx context.Context, cursor string, changed chan<- string) {
	for ctx.Err() == nil {
		err := n.opts.Store.Watch(ctx, cursor, func(c ckpt.Change) error {
			cursor = c.Cursor
			select {
			case changed <- c.ID:
			case <-ctx.Done():
			}
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		n.opts.Warn(fmt.Sprintf("webhooks: the change feed stopped (%v); following it again", err))
		select {
		case <-ctx.Done():
		case <-time.After(n.opts.Tick):
		}
	}
}

// look judges every checkpoint f matches; tell says whether transitions
// are told (not on the first look).
func (n *Notifier) look(ctx context.Context, f ckpt.Filter, tell bool) {
	now := n.opts.Now().UTC()
	err := ckpt.EachPage(ctx, n.opts.Store, f, func(page []ckpt.Summary) error {
		for i := range page {
			n.judge(ctx, &page[i], nil, now, tell)
		}
		return nil
	})
	if d := (*ckpt.DamagedError)(nil); err != nil && !errors.As(err, &d) && ctx.Err() == nil {
		n.opts.Warn("webhooks: listing the store: " + err.Error())
	}
}

// read judges checkpoint id after a change.
func (n *Notifier) read(ctx context.Context, id string) {
	c, err := n.opts.Store.Get(ctx, id, 0)
	if errors.Is(err, ckpt.ErrNotFound) {
		delete(n.last, id)
		n.remember(id, "")
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			n.opts.Warn(fmt.Sprintf("webhooks: reading %s: %v", id, err))
		}
		return
	}
	s := c.Summary()
	n.judge(ctx, &s, c, n.opts.Now().UTC(), true)
}

// judge records s's state and, when it changed and tell is set, queues
// the transition for every target that wants it. A full queue drops it.
// c, when known, is s's checkpoint, for a reason the presence lacks
// (read when not known).
func (n *Notifier) judge(ctx context.Context, s *ckpt.Summary, c *ckpt.Checkpoint, now time.Time, tell bool) {
	st := ckpt.StateOf(s, now, n.opts.Thresholds, n.opts.Alive)
	from, known := n.last[s.ID]
	n.last[s.ID] = st
	if known && from == st {
		return
	}
	n.remember(s.ID, st)
	if !tell {
		return
	}
	v := ckpt.PresenceOf(s, now, n.opts.Thresholds, n.opts.Alive)
	e := Event{Type: "transition", ID: s.ID, Title: s.Title, Agent: s.Agent.Label(), Parent: s.Parent,
		Status: s.Status, From: from, To: st, Reason: v.Why, Rev: s.Rev, At: now, Delivery: DeliveryID(s.ID, st, s.Rev, v.Since)}
	if e.Reason == "" && c == nil {
		c, _ = n.opts.Store.Get(ctx, s.ID, 0) // a listing's summary has no blockers
	}
	if e.Reason == "" && c != nil {
		e.Reason = ckpt.ReasonOf(c, st)
	}
	if !n.lease.leading.Load() {
		n.lease.hold(e)
		return
	}
	n.queue(e)
}

// queue hands e to every target that wants it. A full queue drops it.
func (n *Notifier) queue(e Event) {
	for _, snd := range n.senders {
		if !snd.t.wants(e) {
			continue
		}
		select {
		case snd.queue <- e:
		default:
			n.opts.Count.Count("dropped")
			n.opts.Warn(fmt.Sprintf("webhook %s: %d transitions wait already; dropped %s → %s", snd.t.URL, cap(snd.queue), e.ID, e.To))
		}
	}
}
