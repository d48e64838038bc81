package server

import (
	"net/http"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
)

// bulk: POST /v1/bulk {action, filter, text, ids, dry_run, from}: one
// action on every checkpoint the filter picks (package bulk), in one
// request. It needs a write token; the selection is what the token reads,
// and each checkpoint outside what it may write is reported forbidden, not
// touched. dry_run previews; the answer reports every checkpoint.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request) error {
	if err := need(r.Context(), ScopeWrite); err != nil {
		return err
	}
	var in bulk.Request
	if err := readJSON(r, &in); err != nil {
		return err
	}
	st := s.storeFor(r.Context())
	env := bulk.Env{Store: st, May: func(id string) bool { return st.g.mayWrite(id) == nil }, Now: s.now(),
		Actor: st.g.actor(ckpt.Actor{Agent: in.From}), Thresholds: s.opts.Thresholds, Alive: s.opts.Alive}
	res, err := bulk.Run(r.Context(), env, in)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, res)
}
