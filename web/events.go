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
// browser's automatic reconnect resumes with Last-Event-ID. An idle stream
// sends a comment every Keepalive.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	if _, err := h.principal(r); err != nil {
		writeError(w, &apiError{http.StatusUnauthorized, ckpt.CodeUnauthenticated, "sign in again"})
		return
	}
	feed, ok := h.opts.Store.(ckpt.Watcher)
	if !ok {
		writeError(w, &apiError{http.StatusNotImplemented, ckpt.CodeInvalid, "this store has no change feed"})
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
		if from, err = feed.Head(ctx); err != nil {
			writeError(w, err)
			return
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 1000\n: ckpt change feed from %s\n\n", from)
	if err := rc.Flush(); err != nil {
		return
	}
	changes := make(chan ckpt.Change, 64)
	watchErr := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		watchErr <- feed.Watch(wctx, from, func(c ckpt.Change) error {
			select {
			case changes <- c:
				return nil
			case <-wctx.Done():
				return wctx.Err()
			}
		})
	}()
	nudges, unsubscribe := h.presence.subscribe()
	defer unsubscribe()
	tick := time.NewTicker(h.opts.Keepalive)
	defer tick.Stop()
	for {
		var err error
		select {
		case c := <-changes:
			b, _ := json.Marshal(c)
			_, err = fmt.Fprintf(w, "id: %s\nevent: change\ndata: %s\n\n", c.Cursor, b)
		case id := <-nudges:
			// Not a change of the store: no id, so a reconnect resumes
			// from the last change, not from here.
			b, _ := json.Marshal(map[string]string{"id": id})
			_, err = fmt.Fprintf(w, "event: presence\ndata: %s\n\n", b)
		case <-tick.C:
			_, err = fmt.Fprint(w, ": keepalive\n\n")
		case err = <-watchErr:
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintf(w, "event: feed-error\ndata: %q\n\n", err.Error())
			}
			return
		case <-ctx.Done():
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
