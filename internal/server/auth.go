package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

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
	e, err := s.g.bind(e)
	if err != nil {
		return ckpt.AppendResult{}, err
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
