package web

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// presenceWatch re-derives the presence of every live checkpoint on a
// timer, for all open pages at once, and tells them which rows changed. It
// exists because presence moves without any write: an agent's process dies,
// a silent agent crosses a threshold. It runs while some page listens.
type presenceWatch struct {
	h     *Handler
	mu    sync.Mutex
	subs  map[chan string]struct{}
	stop  context.CancelFunc
	words map[string]string // the last presence word of each live checkpoint
}

// subscribe returns a channel of IDs whose presence changed, and a function
// that ends the subscription. A slow page misses a nudge, never blocks.
// When it returns, the watch has a baseline: a presence that moves after it
// is nudged (the page reads its rows after subscribing; see events).
func (w *presenceWatch) subscribe(ctx context.Context) (<-chan string, func()) {
	ch := make(chan string, 256)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.subs == nil {
		w.subs = map[chan string]struct{}{}
	}
	w.subs[ch] = struct{}{}
	if w.stop == nil {
		wctx, cancel := context.WithCancel(context.Background())
		w.stop = cancel
		w.words = w.derive(ctx)
		go w.run(wctx)
	}
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, ch)
		if len(w.subs) == 0 && w.stop != nil {
			w.stop()
			w.stop, w.words = nil, nil
		}
	}
}

func (w *presenceWatch) run(ctx context.Context) {
	t := time.NewTicker(w.h.opts.PresenceEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.scan(ctx)
		}
	}
}

// derive returns the presence word of every live checkpoint (nil when the
// store cannot be listed).
func (w *presenceWatch) derive(ctx context.Context) map[string]string {
	live := ckpt.Filter{Status: []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked}}
	all, err := ckpt.ListAll(ctx, w.h.opts.Store, live)
	var d *ckpt.DamagedError
	if err != nil && !errors.As(err, &d) {
		return nil
	}
	now := w.h.opts.Now()
	words := make(map[string]string, len(all))
	for i := range all {
		words[all[i].ID] = string(ckpt.PresenceOf(&all[i], now, w.h.opts.Thresholds, w.h.opts.Alive).State)
	}
	return words
}

// scan derives every live checkpoint's presence and nudges the pages about
// those whose word changed since the last scan.
func (w *presenceWatch) scan(ctx context.Context) {
	words := w.derive(ctx)
	if words == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.words != nil {
		for id, word := range words {
			if old, ok := w.words[id]; ok && old != word {
				w.nudge(id)
			}
		}
	}
	w.words = words
}

// nudge tells every page that id's presence changed. The caller holds mu.
func (w *presenceWatch) nudge(id string) {
	for ch := range w.subs {
		select {
		case ch <- id:
		default:
		}
	}
}
