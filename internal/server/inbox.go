package server

import (
	"net/http"
	"strings"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// inbox: GET /v1/inbox?prefix=&parent=&warn=&stale=: what needs a person,
// most urgent first (ckpt.InboxFrom), within the token's prefix: a
// narrower ?prefix= is kept, a wider one is narrowed to the token's.
func (s *Server) inbox(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	t, err := request.ParseThresholds(s.opts.Thresholds, "warn", q.Get("warn"), "stale", q.Get("stale"))
	if err != nil {
		return err
	}
	f := ckpt.Filter{Prefix: grantPrefix(grantOf(r.Context()), q.Get("prefix")), Parent: q.Get("parent")}
	in, err := ckpt.InboxFrom(r.Context(), s.storeFor(r.Context()), f, s.now(), t, s.opts.Alive)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, in)
}

// grantPrefix is the prefix a listing scoped to g uses for the asked one:
// the asked prefix when it lies within g's, else g's.
func grantPrefix(g Grant, asked string) string {
	if g.Prefix == "" || strings.HasPrefix(asked, g.Prefix) {
		return asked
	}
	return g.Prefix
}

// tell: POST /v1/tell/{id} {"text"}: a message for the agent working on
// checkpoint id (ckpt tell). It is a write: a read token may not, a
// prefix-bound token only within its prefix, and an agent-bound token's
// agent is the sender whatever the body says. Idempotency-Key makes a
// retried tell tell once.
func (s *Server) tell(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	var in httpapi.Tell
	if err := readJSON(r, &in); err != nil {
		return err
	}
	st := s.storeFor(r.Context())
	if err := st.g.mayWrite(id); err != nil {
		return err
	}
	key := r.Header.Get(httpapi.HeaderIdempotencyKey)
	res, err := request.Append(r.Context(), st, id, request.Tell{Text: in.Text}, request.Write{At: s.now(), Actor: ckpt.Actor{Agent: in.From}, Key: key})
	s.metrics.countAppend(res.Replayed, err)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Replayed {
		status = http.StatusOK
		w.Header().Set(httpapi.HeaderReplayed, "true")
	}
	return writeJSON(w, status, httpapi.AppendResult{State: res.State, Event: httpapi.WireEvent(res.Event), Replayed: res.Replayed, Warnings: res.Warnings})
}
