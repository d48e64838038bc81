package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// events streams the store's change feed to the page as server-sent
// events: one "change" event per change, its id the feed's cursor, so the
// browser's automatic reconnect resumes with Last-Event-ID. Every page
// shares one store watch (hub). An idle stream sends a comment every
// Keepalive; "presence" events nudge rows whose presence moved without a
// write.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	if _, err := h.principal(r); err != nil {
		writeError(w, &apiError{http.StatusUnauthorized, ckpt.CodeUnauthenticated, "sign in again"})
		return
	}
	ctx := r.Context()
	// A reconnect resumes after the last change seen; a new stream starts
	// where the page's data was read (?from=), or else at the head.
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("from")
	}
	if from == "" {
		var err error
		if from, err = h.opts.Store.Head(ctx); err != nil {
			writeError(w, err)
			return
		}
	}
	// Subscribed before the stream opens: the page refreshes its rows when
	// it opens, so a presence that moves from here on is nudged.
	nudges, unsubscribe := h.presence.subscribe(ctx)
	defer unsubscribe()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n: ckpt change feed from %s\n\n", from)
	if err := rc.Flush(); err != nil {
		return
	}
	changes := make(chan []byte, 64)
	watchErr := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		watchErr <- h.feed.follow(wctx, from, func(fs []frame) error {
			select {
			case changes <- coalesce(fs):
				return nil
			case <-wctx.Done():
				return wctx.Err()
			}
		})
	}()
	h.stream(w, rc, changes, nudges, watchErr, ctx.Done())
}

// stream writes the events of one page until the page goes or the feed
// fails. Each batch of changes the hub hands over (at most one every
// hubBatch) is one write and one flush.
func (h *Handler) stream(w http.ResponseWriter, rc *http.ResponseController, changes <-chan []byte,
	nudges <-chan string, watchErr <-chan error, done <-chan struct{}) {
	keepalive := time.NewTicker(h.opts.Keepalive)
	defer keepalive.Stop()
	for {
		var err error
		select {
		case b := <-changes:
			_, err = w.Write(b)
		case id := <-nudges:
			// Not a change of the store: no id, so a reconnect resumes
			// from the last change, not from here.
			b, _ := json.Marshal(map[string]string{"id": id})
			_, err = fmt.Fprintf(w, "event: presence\ndata: %s\n\n", b)
		case <-keepalive.C:
			_, err = fmt.Fprint(w, ": keepalive\n\n")
		case err = <-watchErr:
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(w, "event: feed-error\ndata: %q\n\n", err.Error())
				_ = rc.Flush()
			}
			return
		case <-done:
			return
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}
