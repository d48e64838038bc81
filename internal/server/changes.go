package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

func (s *Server) watcher() (ckpt.Watcher, error) {
	w, ok := s.store.(ckpt.Watcher)
	if !ok {
		return nil, fmt.Errorf("%w: this server's store has no change feed", ckpt.ErrInvalid)
	}
	return w, nil
}

// changes: GET /v1/changes?from=CURSOR: the change feed as server-sent
// events, from the cursor in Last-Event-ID (a reconnecting EventSource
// sends it), else the from parameter ("" or absent: the feed's start; "now":
// its current end). Each change is an event whose id is its cursor, so a
// client that reconnects with the last id it saw misses nothing and sees
// nothing twice, across a restart of this server or a switch to another
// over the same store. A comment line every Keepalive keeps an idle
// stream alive through proxies. An error after the stream has started
// comes as an "error" event, and the stream ends.
func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	wt, err := s.watcher()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	from := r.URL.Query().Get("from")
	if id := r.Header.Get(httpapi.HeaderLastEventID); id != "" {
		from = id
	}
	rc := http.NewResponseController(w)
	// The stream outlives the server's read timeout by design.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)

	s.metrics.subscribers.Inc()
	defer s.metrics.subscribers.Dec()
	var mu sync.Mutex // the watch callback and the keepalives share w
	send := func(chunk string) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprint(w, chunk); err != nil {
			return err
		}
		return rc.Flush()
	}
	if send(": ckpt change feed\n\n") != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.opts.Keepalive)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if send(": keepalive\n\n") != nil {
					return
				}
			}
		}
	})
	err = wt.Watch(ctx, from, func(c ckpt.Change) error {
		if strings.ContainsAny(c.Cursor, "\r\n") {
			return fmt.Errorf("store cursor %q cannot travel as an event id", c.Cursor)
		}
		data, err := json.Marshal(c)
		if err != nil {
			return err
		}
		return send("id: " + c.Cursor + "\nevent: " + httpapi.SSEChange + "\ndata: " + string(data) + "\n\n")
	})
	close(stop)
	wg.Wait()
	if err != nil && ctx.Err() == nil {
		data, _ := json.Marshal(httpapi.ErrorOf(err))
		_ = send("event: " + httpapi.SSEError + "\ndata: " + string(data) + "\n\n")
	}
}
