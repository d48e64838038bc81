package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// changes: GET /v1/changes?from=CURSOR: the change feed as server-sent
// events, from the cursor in Last-Event-ID (a reconnecting EventSource
// sends it), else the from parameter ("" or absent: the feed's start; "now":
// its current end). Each change is an event whose id is its cursor, so a
// client that reconnects with the last id it saw misses nothing and sees
// nothing twice, across a restart of this server or a switch to another
// over the same store. Every stream reads the server's one store watch
// (feed.Hub); a token that reads only its prefix gets only the changes
// under it (and an id-only event past the others). A comment line every
// Keepalive keeps an idle stream alive through proxies. An error after the
// stream has started (a revoked or expired token, a stream too slow for
// the feed, the store's feed failing) comes as an "error" event, and the
// stream ends.
func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	g := grantOf(r.Context())
	from := r.URL.Query().Get("from")
	if id := r.Header.Get(httpapi.HeaderLastEventID); id != "" {
		from = id
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	if s.opts.TokenWatch != nil {
		var release context.CancelFunc
		ctx, release = s.opts.TokenWatch.Hold(ctx, g)
		defer release()
	}
	sw, err := feed.Start(w, 0, "ckpt change feed")
	if err != nil {
		return
	}
	s.metrics.subscribers.Inc()
	defer s.metrics.subscribers.Dec()
	_ = feed.Stream{
		Hub: s.opts.Feed, From: from, Keepalive: s.opts.Keepalive,
		Encode: func(dst []byte, items []*feed.Item) []byte { return encodeChanges(dst, g, items) },
		Last: func(err error) []byte {
			body := httpapi.ErrorOf(err)
			if httpapi.Status(body.Code) >= 500 {
				s.log.Warn("change feed failed", "err", err)
				body = publicError(body, err)
			}
			data, _ := json.Marshal(body)
			return feed.Frame("", httpapi.SSEError, data)
		},
	}.Run(ctx, sw)
}

// apiFrame keys the API's encoding of a change in feed.Item.Memo.
type apiFrame struct{}

// encodeChanges appends to dst the events of a batch of changes as grant
// g may see them: each encoded once for every stream.
func encodeChanges(dst []byte, g Grant, items []*feed.Item) []byte {
	out := dst
	for _, it := range items {
		if g.mayRead(it.ID) {
			out = append(out, it.Memo(apiFrame{}, func() []byte {
				data, _ := wire.Marshal(&it.Change)
				return feed.Frame(it.Cursor, httpapi.SSEChange, data)
			})...)
		}
	}
	if last := items[len(items)-1]; !g.mayRead(last.ID) {
		out = append(out, feed.IDOnly(last.Cursor)...)
	}
	return out
}
