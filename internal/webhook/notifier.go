package webhook

import (
	"context"
	"errors"
	"fmt"
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
}

// Notifier judges the store's checkpoints and tells the targets about
// each transition. Run drives it.
type Notifier struct {
	opts    Options
	senders []*sender
	last    map[string]ckpt.PresenceState
	lease   leadership    // whether this process tells (lease.go)
	ready   chan struct{} // closed after Run's first look
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
	n := &Notifier{opts: opts, last: map[string]ckpt.PresenceState{}, ready: make(chan struct{})}
	n.lease.init(opts.Store)
	for _, t := range opts.Targets {
		n.senders = append(n.senders, &sender{t: t, queue: make(chan Event, opts.QueueSize), secret: opts.Secret,
			client: opts.Client, backoff: opts.Backoff, retries: opts.Retries, count: opts.Count, warn: opts.Warn})
	}
	return n, nil
}

// liveStatuses are the statuses whose state time can change.
var liveStatuses = []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}

// Run takes the feed's end, judges every checkpoint once (without telling:
// what was true before the server started is not a transition), then
// follows the change feed and looks at the live checkpoints on every tick,
// until ctx is done. A feed or listing that fails is retried at the next
// tick; Run returns only when ctx is done. Over a store shared by several
// servers (a ckpt.Leader) every server judges, and only the one holding
// the "webhooks" lease tells (lease.go).
func (n *Notifier) Run(ctx context.Context) error {
	for _, s := range n.senders {
		go s.run(ctx)
	}
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
	n.look(ctx, ckpt.Filter{}, false)
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
	if !tell || (known && from == st) {
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
