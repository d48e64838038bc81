package webhook

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// LeaseName is the ckpt.Leader lease whose holder tells the webhooks.
const LeaseName = "webhooks"

// holdWindow is how far back the transitions a server judged while it did
// not lead are told when it takes the lease: the time a lost leader takes
// to be noticed (a broken connection, a failover) plus a tick. A
// transition the old leader told in that window may be told twice; none
// is lost.
const holdWindow = 30 * time.Second

// leadership says whether this server tells. Over a store that is no
// ckpt.Leader it always does.
type leadership struct {
	leader  ckpt.Leader   // nil: the store has one server
	leading atomic.Bool   // this server holds the lease
	mu      sync.Mutex    // guards held
	held    []Event       // transitions judged while not leading, oldest first
	gained  chan struct{} // a lease was taken: tell what is held
}

func (l *leadership) init(st ckpt.Store) {
	if ld, ok := ckpt.As[ckpt.Leader](st); ok {
		l.leader = ld
		return
	}
	l.leading.Store(true)
}

// run keeps trying to hold the lease until ctx ends, and returns the
// channel that receives each time it is taken (nil, never ready, over a
// store with one server).
func (l *leadership) run(ctx context.Context, retry time.Duration, warn func(string)) <-chan struct{} {
	if l.leader == nil {
		return nil
	}
	l.gained = make(chan struct{}, 1)
	go func() {
		for ctx.Err() == nil {
			lost, release, err := l.leader.Lead(ctx, LeaseName)
			if err != nil {
				if ctx.Err() == nil {
					warn("webhooks: taking the lease to send them: " + err.Error() + "; trying again")
				}
				select {
				case <-ctx.Done():
				case <-time.After(retry):
				}
				continue
			}
			l.leading.Store(true)
			select {
			case l.gained <- struct{}{}:
			default:
			}
			select {
			case <-ctx.Done():
			case <-lost:
				warn("webhooks: this server lost the lease to send them (its database connection broke); taking it again")
			}
			l.leading.Store(false)
			release()
		}
	}()
	return l.gained
}

// hold keeps e, judged while another server leads, for holdWindow.
func (l *leadership) hold(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = append(l.dropOld(e.At), e)
	if len(l.held) > 1000 {
		l.held = l.held[len(l.held)-1000:]
	}
}

// dropOld returns held without the transitions older than holdWindow at
// now. l.mu is held.
func (l *leadership) dropOld(now time.Time) []Event {
	i := 0
	for i < len(l.held) && now.Sub(l.held[i].At) > holdWindow {
		i++
	}
	return l.held[i:]
}

// tellHeld queues the transitions judged in the holdWindow before now,
// when this server has just taken the lease.
func (n *Notifier) tellHeld(now time.Time) {
	n.lease.mu.Lock()
	held := n.lease.dropOld(now)
	n.lease.held = nil
	n.lease.mu.Unlock()
	for _, e := range held {
		n.queue(e)
		n.remember(e.ID, e.To)
	}
}
