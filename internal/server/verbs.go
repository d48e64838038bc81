package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// lifecycle: POST /v1/lifecycle/{verb}/{id}: the lifecycle operations of
// the root package (ckpt.RunLifecycle), run here next to the data over the
// grant's view of the store (so a prefix-bound token cannot take over
// outside its prefix, and an agent-bound token's agent is the actor, the
// resumed session's agent and a takeover's new agent). If-Match, like
// if_rev, makes the operation one compare-and-swap on that revision.
func (s *Server) lifecycle(w http.ResponseWriter, r *http.Request) error {
	id, verb := r.PathValue("id"), r.PathValue("verb")
	var in httpapi.Lifecycle
	if err := readJSON(r, &in); err != nil {
		return err
	}
	if k := r.Header.Get(httpapi.HeaderIdempotencyKey); k != "" {
		in.Key = k
	}
	rev, err := ifMatch(r)
	if err != nil {
		return err
	}
	if rev > 0 {
		in.IfRev = rev
	}
	st := s.storeFor(r.Context())
	if err := st.g.mayWrite(id); err != nil {
		return err
	}
	l := ckpt.Lifecycle{At: in.At, Actor: st.g.actor(in.Actor), SessionID: in.SessionID, Key: in.Key, Reason: in.Reason, Force: in.Force, IfRev: in.IfRev}
	if l.At.IsZero() {
		l.At = s.now()
	}
	op := ckpt.LifecycleOp{Verb: verb, ID: id, Lifecycle: l, Agent: in.Agent, Force: in.Force, To: in.To, Rev: in.Rev, Note: in.Note, QuietBefore: in.QuietBefore}
	switch verb {
	case httpapi.VerbResume, httpapi.VerbTakeover, httpapi.VerbRestart, httpapi.VerbRestore, httpapi.VerbArchive, httpapi.VerbAbandon:
	default:
		return fmt.Errorf("%w: no lifecycle verb %q: use resume, takeover, restart, restore, archive or abandon", ckpt.ErrNotFound, verb)
	}
	if op.Verb == httpapi.VerbAbandon && op.QuietBefore.IsZero() {
		return fmt.Errorf("%w: abandon needs quiet_before: the time before which the agent's last sign of life makes it quiet", ckpt.ErrInvalid)
	}
	res, err := ckpt.RunLifecycle(r.Context(), st, op)
	if err != nil {
		return err
	}
	out := httpapi.LifecycleResult{State: res.State, ArchivedAs: res.ArchivedAs, Changed: res.Changed, Replayed: res.Replayed}
	if res.Event.Type != "" {
		ev := httpapi.WireEvent(res.Event)
		out.Event = &ev
	}
	return writeJSON(w, http.StatusOK, out)
}

// check: POST /v1/check {ids}: the store's read-only check.
func (s *Server) check(w http.ResponseWriter, r *http.Request) error {
	c, ok := s.store.(ckpt.Checker)
	if !ok {
		return fmt.Errorf("%w: this server's store cannot check itself", ckpt.ErrInvalid)
	}
	var in httpapi.Check
	if err := readJSON(r, &in); err != nil {
		return err
	}
	rep, err := c.Check(r.Context(), in.IDs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// repair: POST /v1/repair {ids} (admin): the store mends what check
// reports; it rewrites stored data, so it needs an admin token.
func (s *Server) repair(w http.ResponseWriter, r *http.Request) error {
	if !grantOf(r.Context()).Scope.Allows(ScopeAdmin) {
		return fmt.Errorf("%w: repair rewrites stored data, so it needs an admin token (this one's scope is %s): run ckpt repair with CKPT_TOKEN set to an admin token (ckpt token create --scope admin), or on the server's machine over its store", ckpt.ErrForbidden, grantOf(r.Context()).Scope)
	}
	rp, ok := s.store.(ckpt.Repairer)
	if !ok {
		return fmt.Errorf("%w: this server's store cannot repair itself", ckpt.ErrInvalid)
	}
	var in httpapi.Check
	if err := readJSON(r, &in); err != nil {
		return err
	}
	rep, err := rp.Repair(r.Context(), in.IDs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// stale: GET /v1/stale?warn=&stale=&prefix=&parent=: the one stale report
// (ckpt.StaleFrom): the live checkpoints whose presence is dead, stale or
// warn, stale and dead first, then warn, each by ID. warn and stale are
// spans as ckpt stale reads them (30m, 2d) over the server's thresholds.
func (s *Server) stale(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	t, err := request.ParseThresholds(s.opts.Thresholds, "warn", q.Get("warn"), "stale", q.Get("stale"))
	if err != nil {
		return err
	}
	f := ckpt.Filter{Prefix: r.URL.Query().Get("prefix"), Parent: r.URL.Query().Get("parent")}
	rep, err := ckpt.StaleFrom(r.Context(), s.storeFor(r.Context()), f, s.now(), t, s.opts.Alive)
	if d := (*ckpt.DamagedError)(nil); err != nil && !errors.As(err, &d) {
		return err
	}
	out := struct {
		Items []httpapi.StaleEntry `json:"items"`
	}{Items: make([]httpapi.StaleEntry, 0, len(rep.Entries))}
	for _, e := range rep.Entries {
		out.Items = append(out.Items, httpapi.StaleEntry{Summary: *e.Summary, Liveness: e.Liveness, Presence: e.Presence, Why: e.Why, SilentSeconds: e.SilentSeconds})
	}
	return writeJSON(w, http.StatusOK, out)
}

// listTokens: GET /v1/tokens (admin): every token, without hashes.
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	if err := need(r.Context(), ScopeAdmin); err != nil {
		return err
	}
	ts, err := s.tokens()
	if err != nil {
		return err
	}
	list, err := ts.List(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Tokens []httpapi.TokenInfo `json:"tokens"`
	}{Tokens: make([]httpapi.TokenInfo, len(list))}
	for i, t := range list {
		out.Tokens[i] = tokenInfo(t)
	}
	return writeJSON(w, http.StatusOK, out)
}

func tokenInfo(t Token) httpapi.TokenInfo {
	return TokenInfoOf(t)
}

// createToken: POST /v1/tokens (admin): the answer carries the bearer
// string, the only time it is shown.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	if err := need(r.Context(), ScopeAdmin); err != nil {
		return err
	}
	ts, err := s.tokens()
	if err != nil {
		return err
	}
	var in httpapi.TokenInfo
	if err := readJSON(r, &in); err != nil {
		return err
	}
	t, bearer, err := NewTokenFrom(in, s.now())
	if err != nil {
		return err
	}
	if err := ts.Add(r.Context(), t); err != nil {
		return err
	}
	out := tokenInfo(t)
	out.Token = bearer
	return writeJSON(w, http.StatusCreated, out)
}

// revokeToken: DELETE /v1/tokens/{id} (admin).
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if err := need(r.Context(), ScopeAdmin); err != nil {
		return err
	}
	ts, err := s.tokens()
	if err != nil {
		return err
	}
	if err := ts.Revoke(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	if s.opts.TokenWatch != nil {
		s.opts.TokenWatch.Gone(r.PathValue("id"))
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// whoAmI: GET /v1/tokens/current: the calling token's grant.
func (s *Server) whoAmI(w http.ResponseWriter, r *http.Request) error {
	g := grantOf(r.Context())
	return writeJSON(w, http.StatusOK, httpapi.TokenInfo{ID: g.TokenID, Scope: string(g.Scope), Prefix: g.Prefix, Agent: g.Agent, ReadPrefix: g.ReadPrefix, ExpiresAt: g.ExpiresAt})
}

func (s *Server) tokens() (TokenStore, error) {
	if s.opts.Tokens == nil {
		return nil, fmt.Errorf("%w: this development server runs without tokens", ckpt.ErrInvalid)
	}
	return s.opts.Tokens, nil
}

// why: GET /v1/why/{id}?warn=&stale=: why the checkpoint shows its
// presence (render.NewWhy, as `ckpt why --json`), judged at the server's
// now with its process probe.
func (s *Server) why(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	t, err := request.ParseThresholds(s.opts.Thresholds, "warn", q.Get("warn"), "stale", q.Get("stale"))
	if err != nil {
		return err
	}
	c, err := s.store.Get(r.Context(), r.PathValue("id"), 0)
	if err != nil {
		return err
	}
	sum := c.Summary()
	return writeJSON(w, http.StatusOK, render.NewWhy(&sum, s.now(), t, s.opts.Alive))
}
