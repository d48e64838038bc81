package server

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// ErrTokenGone is the cause a stream ends with when its token is revoked
// or expires: streams outlive the authentication of their request, so a
// token's revocation must reach them too.
var ErrTokenGone = fmt.Errorf("%w: this stream's token was revoked or has expired: sign in again with a valid token", ckpt.ErrUnauthenticated)

// DefaultTokenRecheck is how often a TokenWatch asks its token store which
// tokens still stand, while streams are open.
const DefaultTokenRecheck = 2 * time.Second

// TokenWatch ends the streams (the API's change feed, the dashboard's
// pages) of tokens that are revoked or expire. A revocation made through
// this process (Gone) ends them at once; one made elsewhere (another
// replica over the same token store, ckpt token revoke on the file) within
// one recheck, by a single List of the token store for all streams. It
// is safe for concurrent use.
type TokenWatch struct {
	ts    TokenStore
	every time.Duration
	now   func() time.Time

	mu      sync.Mutex
	holds   map[string]map[*tokenHold]struct{} // by token ID
	polling bool
}

type tokenHold struct {
	cancel context.CancelCauseFunc
	expiry *time.Timer
}

// NewTokenWatch returns a watch over ts that rechecks every every (0
// means DefaultTokenRecheck) with the clock now (nil means time.Now).
func NewTokenWatch(ts TokenStore, every time.Duration, now func() time.Time) *TokenWatch {
	if every <= 0 {
		every = DefaultTokenRecheck
	}
	if now == nil {
		now = time.Now
	}
	return &TokenWatch{ts: ts, every: every, now: now, holds: map[string]map[*tokenHold]struct{}{}}
}

// Hold returns a context derived from ctx that ends with cause
// ErrTokenGone when the token of grant g is revoked or expires; cancel
// releases it.
func (tw *TokenWatch) Hold(ctx context.Context, g Grant) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	if g.TokenID == "" { // the insecure development mode: no token to lose
		return ctx, func() { cancel(context.Canceled) }
	}
	h := &tokenHold{cancel: cancel}
	if !g.ExpiresAt.IsZero() {
		h.expiry = time.AfterFunc(g.ExpiresAt.Sub(tw.now()), func() { cancel(ErrTokenGone) })
	}
	tw.mu.Lock()
	set := tw.holds[g.TokenID]
	if set == nil {
		set = map[*tokenHold]struct{}{}
		tw.holds[g.TokenID] = set
	}
	set[h] = struct{}{}
	if !tw.polling {
		tw.polling = true
		go tw.poll()
	}
	tw.mu.Unlock()
	return ctx, func() {
		tw.mu.Lock()
		delete(tw.holds[g.TokenID], h)
		if len(tw.holds[g.TokenID]) == 0 {
			delete(tw.holds, g.TokenID)
		}
		tw.mu.Unlock()
		if h.expiry != nil {
			h.expiry.Stop()
		}
		cancel(context.Canceled)
	}
}

// Gone ends at once the streams of token id (revoked through this
// process).
func (tw *TokenWatch) Gone(id string) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	for h := range tw.holds[id] {
		h.cancel(ErrTokenGone)
	}
}

// poll rechecks the held tokens every tw.every while any is held.
func (tw *TokenWatch) poll() {
	t := time.NewTicker(tw.every)
	defer t.Stop()
	for range t.C {
		tw.mu.Lock()
		if len(tw.holds) == 0 {
			tw.polling = false
			tw.mu.Unlock()
			return
		}
		tw.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), tw.every+5*time.Second)
		list, err := tw.ts.List(ctx)
		cancel()
		if err != nil {
			continue // the token store is away: keep the streams, ask again
		}
		standing := make(map[string]bool, len(list))
		now := tw.now()
		for _, tok := range list {
			standing[tok.ID] = !tok.Expired(now)
		}
		tw.mu.Lock()
		for id, set := range tw.holds {
			if !standing[id] {
				for h := range set {
					h.cancel(ErrTokenGone)
				}
			}
		}
		tw.mu.Unlock()
	}
}
