package web

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
)

// events streams the store's change feed to the page as server-sent
// events: one "change" event per change the visitor may see, its id the
// feed's cursor, so the browser's automatic reconnect resumes with
// Last-Event-ID. Every page shares the server's one store watch
// (feed.Hub). An idle stream sends a comment every Keepalive; "presence"
// events nudge rows whose presence moved without a write. The stream ends
// when the visitor's token is revoked or expires (Principal.Hold).
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	p, err := h.principal(r)
	if err != nil {
		writeError(w, &apiError{http.StatusUnauthorized, ckpt.CodeUnauthenticated, "sign in again"})
		return
	}
	ctx := r.Context()
	if p.Hold != nil {
		var cancel context.CancelFunc
		ctx, cancel = p.Hold(ctx)
		defer cancel()
	}
	// A reconnect resumes after the last change seen; a new stream starts
	// where the page's data was read (?from=), or else at the feed's end.
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = r.URL.Query().Get("from")
	}
	if from == "" {
		from = ckpt.CursorNow
	}
	// Subscribed before the stream opens: the page refreshes its rows when
	// it opens, so a presence that moves from here on is nudged.
	nudges, unsubscribe := h.presence.subscribe(ctx)
	defer unsubscribe()
	sw, err := feed.Start(w, time.Second, "ckpt change feed from "+from)
	if err != nil {
		return
	}
	other := make(chan []byte)
	go func() {
		for {
			select {
			case id := <-nudges:
				if !p.mayRead(id) {
					continue
				}
				// Not a change of the store: no id, so a reconnect resumes
				// from the last change, not from here.
				b, _ := json.Marshal(map[string]string{"id": id})
				select {
				case other <- feed.Frame("", "presence", b):
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	_ = feed.Stream{
		Hub: h.feed, From: from, Keepalive: h.opts.Keepalive, Other: other,
		Encode: func(dst []byte, items []*feed.Item) []byte { return h.encode(dst, p, items) },
		Last: func(err error) []byte {
			b, _ := json.Marshal(err.Error())
			return feed.Frame("", "feed-error", b)
		},
	}.Run(ctx, sw)
}
