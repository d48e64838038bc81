package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
)

type grantKey struct{}

// grantOf returns the grant of an authenticated request.
func grantOf(ctx context.Context) Grant {
	g, _ := ctx.Value(grantKey{}).(Grant)
	return g
}

// authenticate refuses a request without a valid bearer token and puts the
// token's grant in the request's context. In insecure (development) mode
// every request is admin.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Insecure {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, Grant{Scope: ScopeAdmin})))
			return
		}
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || bearer == "" {
			s.metrics.authFailures.WithLabelValues("missing").Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="ckpt"`)
			s.writeError(w, r, fmt.Errorf("%w: no bearer token: send Authorization: Bearer TOKEN (CKPT_TOKEN for ckpt commands)", ckpt.ErrUnauthenticated))
			return
		}
		t, err := Authenticate(r.Context(), s.opts.Tokens, strings.TrimSpace(bearer), s.now())
		if err != nil {
			s.metrics.authFailures.WithLabelValues("invalid").Inc()
			w.Header().Set("WWW-Authenticate", `Bearer realm="ckpt", error="invalid_token"`)
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, t.Grant())))
	})
}

// need fails unless the request's grant includes scope.
func need(ctx context.Context, scope Scope) error {
	g := grantOf(ctx)
	if !g.Scope.Allows(scope) {
		return fmt.Errorf("%w: this token's scope is %s; the call needs %s (ckpt token create --scope %s)", ckpt.ErrForbidden, g.Scope, scope, scope)
	}
	return nil
}

// mayWrite fails unless the grant may write checkpoint id.
func (g Grant) mayWrite(id string) error {
	if !g.Scope.Allows(ScopeWrite) {
		return fmt.Errorf("%w: this token's scope is %s; writing needs write (ckpt token create --scope write)", ckpt.ErrForbidden, g.Scope)
	}
	if !ckpt.UnderPrefix(id, g.Prefix) {
		return fmt.Errorf("%w: this token writes only checkpoints under %s, not %s", ckpt.ErrForbidden, ckpt.PathPrefix(g.Prefix), id)
	}
	return nil
}

// mayRead reports whether the grant sees checkpoint id: every one, unless
// the token reads only its prefix.
func (g Grant) mayRead(id string) bool {
	return !g.ReadPrefix || ckpt.UnderPrefix(id, g.Prefix)
}

// actor returns the actor a write records: the token's agent when it is
// bound to one, whatever the client claimed.
func (g Grant) actor(a ckpt.Actor) ckpt.Actor {
	if g.Agent != "" {
		a.Agent = g.Agent
	}
	return a
}

// scopedStore is the store as one grant sees it: every write is checked
// against the grant and records the grant's agent (see Grant.bind). The handlers and the
// mounted MCP server both go through it, so there is one enforcement
// point whatever the surface.
type scopedStore struct {
	ckpt.Store
	g Grant
}

func (s scopedStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if err := s.g.mayWrite(id); err != nil {
		return ckpt.AppendResult{}, err
	}
	if !e.At.IsZero() && (e.At.Before(minEventTime) || e.At.Year() > 9999) {
		return ckpt.AppendResult{}, fmt.Errorf("%w: event time %s is not plausible: send the time the change was made, or none (the store stamps it)", ckpt.ErrInvalid, e.At.Format(time.RFC3339))
	}
	e, err := s.g.bind(e)
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	if e, err = s.keepAgent(ctx, id, e); err != nil {
		return ckpt.AppendResult{}, err
	}
	if s.g.Agent != "" {
		// The token's agent is the actor, whatever the checkpoint's is.
		opts.AsCheckpointAgent = false
	}
	return s.Store.Append(ctx, id, e, opts)
}

func (s scopedStore) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	if err := s.g.mayWrite(id); err != nil {
		return err
	}
	return s.Store.Beat(ctx, id, sig)
}

func (s scopedStore) Delete(ctx context.Context, id string) error {
	if !s.g.Scope.Allows(ScopeAdmin) {
		return fmt.Errorf("%w: deleting a checkpoint is retention, an admin's call (ckpt prune with an admin token)", ckpt.ErrForbidden)
	}
	return s.Store.Delete(ctx, id)
}

// minEventTime is the earliest event time the server accepts: ckpt did
// not exist before it, and a year-1 time is a client's zero value or an
// attack on the ordering of views.
var minEventTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// keepAgent makes a snapshot (restored, imported, synced) written by an
// agent-bound token keep the checkpoint's agent: a snapshot replaces the
// whole state, agent included, so without this a bound token could name
// anyone. A snapshot that creates the checkpoint names the token's agent.
func (s scopedStore) keepAgent(ctx context.Context, id string, e ckpt.Event) (ckpt.Event, error) {
	if s.g.Agent == "" || (e.Type != ckpt.EventRestored && e.Type != ckpt.EventImported && e.Type != ckpt.EventSynced) {
		return e, nil
	}
	var keep *ckpt.Agent
	switch c, err := s.Store.Get(ctx, id, 0); {
	case err == nil:
		keep = &c.Agent
	case errors.Is(err, ckpt.ErrNotFound):
		keep = s.g.agent(nil)
	default:
		return e, err
	}
	err := rebind(&e, func(d *ckpt.Snapshot) {
		t := d.State.Agent.Type
		d.State.Agent = *keep
		if d.State.Agent.Type == "" {
			d.State.Agent.Type = t
		}
		for i := range d.State.Steps {
			d.State.Steps[i].By = s.g.by(d.State.Steps[i].By)
		}
	})
	return e, err
}

// Get refuses (as not found: a tenant does not learn what others have) a
// checkpoint the grant may not read.
func (s scopedStore) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	if !s.g.mayRead(id) {
		return nil, s.g.hidden(id)
	}
	return s.Store.Get(ctx, id, rev)
}

// History refuses a checkpoint the grant may not read, as Get does.
func (s scopedStore) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	if !s.g.mayRead(id) {
		return nil, s.g.hidden(id)
	}
	return s.Store.History(ctx, id, from, limit)
}

// List lists only what the grant may read.
func (s scopedStore) List(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	if s.g.ReadPrefix {
		p, ok := ckpt.NarrowPrefix(opts.Filter.Prefix, s.g.Prefix)
		if !ok {
			return ckpt.Page{}, nil
		}
		opts.Filter.Prefix = p
	}
	return s.Store.List(ctx, opts)
}

func (g Grant) hidden(id string) error {
	return fmt.Errorf("%w: checkpoint %s (this token reads only under %s)", ckpt.ErrNotFound, id, g.Prefix)
}

// Close does not close the shared store.
func (s scopedStore) Close() error { return nil }

// storeFor returns the store as the request's grant sees it.
func (s *Server) storeFor(ctx context.Context) scopedStore {
	return scopedStore{Store: s.store, g: grantOf(ctx)}
}

// StoreFor returns st as grant g may write it: every write checked against
// g's scope and prefix and recorded with g's agent, as the API and MCP
// apply them. The dashboard's actions go through it, so no surface
// escapes a token's grant.
func StoreFor(st ckpt.Store, g Grant) ckpt.Store {
	return scopedStore{Store: st, g: g}
}
