package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// writeError writes err as an API error body with the status of its code.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if ckpt.ErrorCode(err) == ckpt.CodeForbidden {
		s.metrics.authFailures.WithLabelValues("forbidden").Inc()
	}
	body := httpapi.ErrorOf(err)
	status := httpapi.Status(body.Code)
	if status >= 500 {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "code", body.Code, "err", err)
		body = publicError(body, err)
	}
	if errors.Is(err, ckpt.ErrUnavailable) {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, body)
}

// readJSON decodes the request body into v; an empty body leaves v zero.
// The body must be one JSON value in valid UTF-8: trailing data after it
// (a second object smuggled past a proxy that reads the first) and
// invalid UTF-8 (which encoding/json would store mangled) are refused.
func readJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBody(body, v)
}

// readBody reads the request body whole, within the server's limit.
func readBody(r *http.Request) ([]byte, error) { return readBodyTo(nil, r) }

// readBodyTo is readBody appending to dst (the append's pooled buffer).
func readBodyTo(dst []byte, r *http.Request) ([]byte, error) {
	body, err := readAllTo(dst, r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, fmt.Errorf("%w: the request body is over the server's %d-byte limit", ckpt.ErrInvalid, tooBig.Limit)
		}
		return nil, fmt.Errorf("%w: reading the request body: %v", ckpt.ErrUnavailable, err)
	}
	return body, nil
}

// decodeBody is readJSON's parser, over the body's bytes.
func decodeBody(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if !utf8.Valid(body) {
		return fmt.Errorf("%w: the request body is not valid UTF-8: send JSON text in UTF-8", ckpt.ErrInvalid)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", ckpt.ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: the request body has data after its JSON value: send exactly one JSON object", ckpt.ErrInvalid)
	}
	return nil
}

// queryInt reads an integer query parameter (def when absent).
func queryInt(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a whole number", ckpt.ErrInvalid, name, v)
	}
	return n, nil
}

func queryTime(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s=%q is not an RFC 3339 time", ckpt.ErrInvalid, name, v)
	}
	return t, nil
}

// filterOf reads a listing filter from the query: status (comma-separated
// or repeated), agent, parent, label, prefix, archived, updated_since,
// seen_before.
func filterOf(r *http.Request) (ckpt.Filter, error) {
	q := r.URL.Query()
	f := ckpt.Filter{Agent: q.Get("agent"), Parent: q.Get("parent"), Label: q.Get("label"), Prefix: q.Get("prefix")}
	for _, v := range q["status"] {
		for _, st := range strings.Split(v, ",") {
			if st != "" {
				f.Status = append(f.Status, ckpt.Status(st))
			}
		}
	}
	if v := q.Get("archived"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return f, fmt.Errorf("%w: archived=%q: use true or false", ckpt.ErrInvalid, v)
		}
		f.IncludeArchived = b
	}
	var err error
	if f.UpdatedSince, err = queryTime(r, "updated_since"); err != nil {
		return f, err
	}
	f.SeenBefore, err = queryTime(r, "seen_before")
	return f, err
}

// list: GET /v1/checkpoints. A page holds at most ckpt.MaxPageSize items
// (limit 0 or more asks for that many); Next continues.
func (s *Server) list(w http.ResponseWriter, r *http.Request) error {
	f, err := filterOf(r)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 0)
	if err != nil {
		return err
	}
	if limit <= 0 || limit > ckpt.MaxPageSize {
		limit = ckpt.MaxPageSize
	}
	p, err := s.storeFor(r.Context()).List(r.Context(), ckpt.ListOptions{Filter: f, Limit: int(limit), After: r.URL.Query().Get("after")})
	out := httpapi.Page{Items: p.Items, Next: p.Next}
	var d *ckpt.DamagedError
	if errors.As(err, &d) {
		out.Damaged = httpapi.ErrorOf(d)
	} else if err != nil {
		return err
	}
	if out.Items == nil {
		out.Items = []ckpt.Summary{}
	}
	return writeJSON(w, http.StatusOK, out)
}

// get: GET /v1/checkpoints/{id}?rev=N.
func (s *Server) get(w http.ResponseWriter, r *http.Request) error {
	rev, err := queryInt(r, "rev", 0)
	if err != nil {
		return err
	}
	c, err := s.storeFor(r.Context()).Get(r.Context(), r.PathValue("id"), rev)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", strconv.Quote(strconv.FormatInt(c.Rev, 10)))
	return writeJSON(w, http.StatusOK, c)
}

// delete: DELETE /v1/checkpoints/{id} (admin).
func (s *Server) delete(w http.ResponseWriter, r *http.Request) error {
	if err := s.storeFor(r.Context()).Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ifMatch reads If-Match: a revision, bare or as an entity tag ("7",
// W/"7"); absent or * is no condition.
func ifMatch(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get(httpapi.HeaderIfMatch))
	if v == "" || v == "*" {
		return 0, nil
	}
	tag := strings.Trim(strings.TrimPrefix(v, "W/"), `"`)
	n, err := strconv.ParseInt(tag, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: If-Match %q: give the revision you read, e.g. If-Match: \"7\"", ckpt.ErrInvalid, v)
	}
	return n, nil
}

// keyOrigin reads Ckpt-Key-Origin: new, resent, or absent (a given key).
// A client that claims new for a key it used before can only double its
// own write, which it may make anyway.
func keyOrigin(r *http.Request) (ckpt.KeyOrigin, error) {
	switch v := r.Header.Get(httpapi.HeaderKeyOrigin); v {
	case "":
		return ckpt.KeyGiven, nil
	case httpapi.KeyOriginNew:
		return ckpt.KeyNew, nil
	case httpapi.KeyOriginResent:
		return ckpt.KeyResent, nil
	default:
		return 0, fmt.Errorf("%w: %s %q: send %q for a key made for this append, %q when sending it again, or no header", ckpt.ErrInvalid, httpapi.HeaderKeyOrigin, v, httpapi.KeyOriginNew, httpapi.KeyOriginResent)
	}
}

// append: POST /v1/events/{id}. 201 with the result for a new event, 200
// and Idempotent-Replayed: true for a repeated key. Prefer:
// return=minimal leaves the state out of the answer (null; the event's
// seq and the ETag are its revision).
func (s *Server) append(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rev, err := ifMatch(r)
	if err != nil {
		return err
	}
	// One buffer holds the body, then the answer (the whole state): an
	// append allocates neither once the pool has buffers of their size.
	buf := appendBufs.Get().(*[]byte)
	defer putAppendBuf(buf)
	body, err := readBodyTo((*buf)[:0], r)
	*buf = body
	if err != nil {
		return err
	}
	var in httpapi.Event
	if err := decodeEvent(body, &in); err != nil {
		return err
	}
	e := in.Store()
	if k := r.Header.Get(httpapi.HeaderIdempotencyKey); k != "" {
		e.Key = k
	}
	origin, err := keyOrigin(r)
	if err != nil {
		return err
	}
	asAgent := r.Header.Get(httpapi.HeaderAsAgent) == "true"
	res, err := s.storeFor(r.Context()).Append(r.Context(), id, e, ckpt.AppendOptions{IfRev: rev, AsCheckpointAgent: asAgent, KeyOrigin: origin})
	s.metrics.countAppend(res.Replayed, err)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Replayed {
		status = http.StatusOK
		w.Header().Set(httpapi.HeaderReplayed, "true")
	}
	w.Header().Set("ETag", strconv.Quote(strconv.FormatInt(res.State.Rev, 10)))
	out := httpapi.AppendResult{State: res.State, Event: httpapi.WireEvent(res.Event), Replayed: res.Replayed, Warnings: res.Warnings}
	if wantsMinimal(r) {
		out.State = nil
		w.Header().Set("Preference-Applied", preferMinimal)
	}
	data, err := appendAnswer((*buf)[:0], out)
	if err != nil {
		return writeJSON(w, status, out)
	}
	*buf = data
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, err = w.Write(data)
	return err
}

// history: GET /v1/events/{id}?from=&limit=.
func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	from, err := queryInt(r, "from", 0)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 0)
	if err != nil {
		return err
	}
	if limit < 0 {
		return fmt.Errorf("%w: limit %d is negative", ckpt.ErrInvalid, limit)
	}
	events, err := s.storeFor(r.Context()).History(r.Context(), r.PathValue("id"), from, int(limit))
	if err != nil {
		return err
	}
	out := struct {
		Events []httpapi.Event `json:"events"`
	}{Events: make([]httpapi.Event, len(events))}
	for i, e := range events {
		out.Events[i] = httpapi.WireEvent(e)
	}
	return writeJSON(w, http.StatusOK, out)
}

// beat: POST /v1/beats/{id}.
func (s *Server) beat(w http.ResponseWriter, r *http.Request) error {
	var b httpapi.Beat
	if err := readJSON(r, &b); err != nil {
		return err
	}
	if b.State != "" && !b.State.Valid() {
		return fmt.Errorf("%w: presence state %q: use working, busy, waiting or ended", ckpt.ErrInvalid, b.State)
	}
	if b.For != "" && b.For != ckpt.WaitsPerson && b.For != ckpt.WaitsThing {
		return fmt.Errorf("%w: presence for %q: a waiting state waits for a %s or a %s", ckpt.ErrInvalid, b.For, ckpt.WaitsPerson, ckpt.WaitsThing)
	}
	if err := s.storeFor(r.Context()).Beat(r.Context(), r.PathValue("id"), b.Signal()); err != nil {
		return err
	}
	s.metrics.beats.Inc()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// head: GET /v1/changes/head.
func (s *Server) head(w http.ResponseWriter, r *http.Request) error {
	cur, err := s.store.Head(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, httpapi.Head{Cursor: cur})
}

// info: GET /v1/info.
func (s *Server) info(w http.ResponseWriter, r *http.Request) error {
	caps := ckpt.CapabilitiesOf(s.store)
	return writeJSON(w, http.StatusOK, httpapi.Info{Version: s.opts.Version, Capabilities: caps})
}

// publicError is what a client is told of a server-side failure: the
// store's own words stay in the server's log, for they may name the
// database, its user, host or socket. The server's own messages (a
// request cut short, a stream behind) are kept.
func publicError(in *httpapi.Error, err error) *httpapi.Error {
	var own *serverError
	if errors.As(err, &own) || errors.Is(err, feed.ErrBehind) || in.Code == ckpt.CodeCorrupt {
		return in // a damaged checkpoint's report names checkpoints, not the database
	}
	body := *in
	if body.Code == ckpt.CodeUnavailable {
		body.Message = "unavailable: the server's store did not answer; try again shortly (the server's log says why)"
	} else {
		body.Message = "the server failed to answer this request (its log says why)"
	}
	return &body
}

// serverError is a failure the server describes itself: it says nothing
// of the store's internals, so clients see it as it is.
type serverError struct{ err error }

func (e *serverError) Error() string { return e.err.Error() }
func (e *serverError) Unwrap() error { return e.err }
