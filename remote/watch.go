package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/backoff"
	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// Head implements ckpt.Watcher.
func (s *Store) Head(ctx context.Context) (string, error) {
	var h httpapi.Head
	if _, err := s.do(ctx, call{method: http.MethodGet, path: httpapi.PathHead, out: &h}); err != nil {
		return "", err
	}
	return h.Cursor, nil
}

// Watch implements ckpt.Watcher over the server's event stream. When the
// stream breaks (the server restarts, a proxy drops it, it goes silent for
// StreamIdle) it reconnects from the last cursor delivered, with backoff,
// for as long as ctx lasts: the feed's own guarantee (no gap, no repeat)
// then holds across the break. Errors the server reports (a foreign
// cursor, a refused token) end it.
func (s *Store) Watch(ctx context.Context, from string, fn func(ckpt.Change) error) error {
	cursor := from
	retry := backoff.Loop{Policy: s.backoff()}
	for {
		progressed, err := s.stream(ctx, &cursor, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var fnErr fnError
		if errors.As(err, &fnErr) {
			return fnErr.err
		}
		if err != nil && !ckpt.Retryable(err) {
			return err
		}
		if err := retry.Wait(ctx, progressed); err != nil {
			return err
		}
	}
}

// fnError carries the callback's own error out of stream untouched.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// stream reads one connection's events, advancing *cursor past each change
// fn accepted. It reports whether any change was delivered.
func (s *Store) stream(ctx context.Context, cursor *string, fn func(ckpt.Change) error) (bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	q := url.Values{}
	q.Set("from", *cursor)
	req, err := s.request(ctx, http.MethodGet, httpapi.PathChanges, q, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if *cursor != "" {
		req.Header.Set(httpapi.HeaderLastEventID, *cursor)
	}
	// A watchdog ends a stream that has gone silent past StreamIdle
	// (keepalives count): the connection is dead though no error says so.
	idle := time.AfterFunc(s.opts.StreamIdle, cancel)
	defer idle.Stop()
	resp, err := s.hc.Do(req)
	if err != nil {
		return false, transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var buf [4096]byte
		n, _ := resp.Body.Read(buf[:])
		return false, httpapi.DecodeError(resp.StatusCode, buf[:n])
	}
	progressed := false
	err = feed.Read(resp.Body, func() { idle.Reset(s.opts.StreamIdle) }, func(ev feed.Event) error {
		if err := s.dispatch(ev, cursor, fn); err != nil {
			return err
		}
		progressed = progressed || ev.Type == httpapi.SSEChange
		return nil
	})
	if err != nil {
		var fe fnError
		var re *httpapi.RemoteError
		if errors.As(err, &fe) || errors.As(err, &re) || ckpt.Retryable(err) {
			return progressed, err
		}
		return progressed, transportError(ctx, err)
	}
	return progressed, fmt.Errorf("%w: the server ended the change feed", ckpt.ErrUnavailable)
}

// dispatch handles one complete server-sent event.
// An event with no data only moves the cursor past changes this token
// may not see.
func (s *Store) dispatch(ev feed.Event, cursor *string, fn func(ckpt.Change) error) error {
	data := ev.Data
	switch ev.Type {
	case "":
		if data == "" && ev.ID != "" {
			*cursor = ev.ID
		}
	case httpapi.SSEChange:
		var c ckpt.Change
		if err := wire.Unmarshal([]byte(data), &c); err != nil {
			return fmt.Errorf("%w: a change from the server is not JSON: %v", ckpt.ErrUnavailable, err)
		}
		if err := fn(c); err != nil {
			return fnError{err}
		}
		*cursor = c.Cursor
	case httpapi.SSEError:
		var e httpapi.Error
		if err := json.Unmarshal([]byte(data), &e); err != nil || e.Code == "" {
			return fmt.Errorf("%w: the server ended the change feed with %q", ckpt.ErrUnavailable, data)
		}
		return e.Err()
	}
	return nil
}
