package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// Page sizes of the overview and the timeline.
const (
	defaultRows   = 100
	maxRows       = 500
	defaultEvents = 50
	maxEvents     = 200
)

// apiError is an error with the HTTP status and stable code it is sent with.
type apiError struct {
	status int
	code   ckpt.Code
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &apiError{http.StatusBadRequest, ckpt.CodeInvalid, fmt.Sprintf(format, args...)}
}

// statusOf maps a code onto an HTTP status.
var statusOf = map[ckpt.Code]int{
	ckpt.CodeNotFound: http.StatusNotFound, ckpt.CodeExists: http.StatusConflict,
	ckpt.CodeConflict: http.StatusConflict, ckpt.CodeInvalid: http.StatusBadRequest,
	ckpt.CodeNotResumable: http.StatusConflict, ckpt.CodeCycleLimit: http.StatusConflict,
	ckpt.CodeUnauthenticated: http.StatusUnauthorized, ckpt.CodeForbidden: http.StatusForbidden,
	ckpt.CodeUnavailable: http.StatusServiceUnavailable, ckpt.CodeCanceled: http.StatusServiceUnavailable,
}

// api wraps a JSON endpoint: it finds the principal (401 when the visitor
// must sign in), checks CSRF on POST, and writes the result or the error as
// JSON {code, message}.
func (h *Handler) api(fn func(r *http.Request, p Principal) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		p, err := h.principal(r)
		if err != nil {
			writeError(w, &apiError{http.StatusUnauthorized, ckpt.CodeUnauthenticated, "sign in again: the dashboard's token was not accepted"})
			return
		}
		if r.Method == http.MethodPost && !h.csrfOK(r) {
			writeError(w, &apiError{http.StatusForbidden, ckpt.CodeForbidden, "refused: the request did not come from this dashboard's own page"})
			return
		}
		out, err := fn(r, p)
		w, done := compressed(w, r)
		defer done()
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		code := ckpt.ErrorCode(err)
		status, ok := statusOf[code]
		if !ok {
			status = http.StatusInternalServerError
		}
		ae = &apiError{status, code, err.Error()}
	}
	writeJSON(w, ae.status, map[string]string{"code": string(ae.code), "message": ae.msg})
}

// me is what the page needs to know about its visitor.
type me struct {
	Name   string `json:"name"`
	Write  bool   `json:"write"`
	Prefix string `json:"prefix,omitempty"`
	SignIn bool   `json:"sign_in"` // the dashboard has sign-in (and so sign-out)
}

func (h *Handler) me(p Principal) me {
	return me{Name: p.Name, Write: p.Write, Prefix: p.Prefix, SignIn: h.opts.Authenticate != nil}
}

// overviewQuery is the overview's filter, as it appears in the page's URL.
type overviewQuery struct {
	filter   ckpt.Filter
	presence map[string]bool
	text     string
	after    string
	limit    int
}

func parseOverview(r *http.Request) (overviewQuery, error) {
	q := r.URL.Query()
	o := overviewQuery{after: q.Get("after"), limit: defaultRows, text: strings.ToLower(strings.TrimSpace(q.Get("q")))}
	o.filter = ckpt.Filter{Agent: q.Get("agent"), Parent: q.Get("parent"), Label: q.Get("label"), Prefix: q.Get("prefix"), IncludeArchived: q.Get("archived") == "1"}
	for _, w := range splitList(q.Get("status")) {
		st, err := ckpt.ParseStatus(w)
		if err != nil {
			return o, badRequest("status filter: %v", err)
		}
		o.filter.Status = append(o.filter.Status, st)
	}
	if ws := splitList(q.Get("presence")); len(ws) > 0 {
		o.presence = map[string]bool{}
		for _, w := range ws {
			o.presence[w] = true
		}
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			return o, badRequest("limit %q: give a positive number", l)
		}
		o.limit = min(n, maxRows)
	}
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, w := range strings.Split(s, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// matches applies the filters the store cannot run: presence and text.
func (o overviewQuery) matches(r Row) bool {
	if o.presence != nil && !o.presence[r.Presence] {
		return false
	}
	if o.text == "" {
		return true
	}
	hay := strings.ToLower(r.ID + " " + r.Title + " " + r.Agent.Name + " " + r.Agent.ID + " " + r.CurrentStep)
	return strings.Contains(hay, o.text)
}

type overviewOut struct {
	Me  me        `json:"me"`
	Now time.Time `json:"now"`
	// Cursor is the change feed's head taken before the rows were read:
	// the page's event stream starts there, so it misses nothing.
	Cursor string         `json:"cursor,omitempty"`
	Rows   []Row          `json:"rows"`
	Next   string         `json:"next,omitempty"`
	Counts map[string]int `json:"counts,omitempty"`
	// Damaged names checkpoints that could not be read.
	Damaged []string `json:"damaged,omitempty"`
}

// overview returns one page of rows and, on the first page, the count of
// checkpoints in each presence state under the store-side filters.
func (h *Handler) overview(r *http.Request, p Principal) (any, error) {
	q, err := parseOverview(r)
	if err != nil {
		return nil, err
	}
	if p.ReadPrefix { // a tenant lists its own checkpoints only
		prefix, ok := ckpt.NarrowPrefix(q.filter.Prefix, p.Prefix)
		if !ok {
			prefix = ckpt.PathPrefix(p.Prefix) + "\x00" // no ID: nothing else to show
		}
		q.filter.Prefix = prefix
	}
	now := h.opts.Now()
	out := overviewOut{Me: h.me(p), Now: now, Rows: []Row{}, Cursor: h.head(r.Context())}
	opts := ckpt.ListOptions{Filter: q.filter, After: q.after, Limit: max(q.limit, defaultRows)}
	if err := h.scan(r.Context(), opts, now, func(row Row) bool {
		if !q.matches(row) {
			return true
		}
		out.Rows = append(out.Rows, row)
		if len(out.Rows) == q.limit {
			out.Next = row.ID // the page is full: the next one starts after it
			return false
		}
		return true
	}, &out.Damaged); err != nil {
		return nil, err
	}
	if q.after == "" {
		counts, err := h.countsCache.get(q.filter, func() (map[string]int, error) {
			return h.counts(r.Context(), q.filter, now)
		})
		if err != nil {
			return nil, err
		}
		out.Counts = counts
	}
	return out, nil
}

// scan pages through the store's listing from opts, calling fn with each
// row until fn returns false; damaged checkpoints are added to damaged.
func (h *Handler) scan(ctx context.Context, opts ckpt.ListOptions, now time.Time, fn func(Row) bool, damaged *[]string) error {
	for {
		page, err := h.opts.Store.List(ctx, opts)
		var d *ckpt.DamagedError
		if errors.As(err, &d) {
			*damaged = append(*damaged, d.IDs...)
		} else if err != nil {
			return err
		}
		for i := range page.Items {
			if !fn(h.rowOf(&page.Items[i], now)) {
				return nil
			}
		}
		if page.Next == "" {
			return nil
		}
		opts.After = page.Next
	}
}

// counts counts the checkpoints f matches in each presence state.
func (h *Handler) counts(ctx context.Context, f ckpt.Filter, now time.Time) (map[string]int, error) {
	all, err := ckpt.ListAll(ctx, h.opts.Store, f)
	var d *ckpt.DamagedError
	if err != nil && !errors.As(err, &d) {
		return nil, err
	}
	counts := map[string]int{}
	for i := range all {
		counts[h.rowOf(&all[i], now).Presence]++
	}
	return counts, nil
}

// head returns the change feed's current cursor, "" when the store has no
// feed or cannot say (the page then starts its stream at the feed's head).
func (h *Handler) head(ctx context.Context) string {
	w, ok := h.opts.Store.(ckpt.Watcher)
	if !ok {
		return ""
	}
	c, err := w.Head(ctx)
	if err != nil {
		return ""
	}
	return c
}

// row returns one checkpoint's row: the page refreshes a row when the
// change feed says it changed.
func (h *Handler) row(r *http.Request, p Principal) (any, error) {
	c, err := h.get(r, p, 0)
	if err != nil {
		return nil, err
	}
	s := c.Summary()
	return h.rowOf(&s, h.opts.Now()), nil
}

// rowJSON returns id's row as JSON, nil when it cannot be read (deleted
// since, damaged): the page then fetches it and shows what that says.
func (h *Handler) rowJSON(ctx context.Context, id string) []byte {
	c, err := h.opts.Store.Get(ctx, id, 0)
	if err != nil {
		return nil
	}
	s := c.Summary()
	b, err := json.Marshal(h.rowOf(&s, h.opts.Now()))
	if err != nil {
		return nil
	}
	return b
}

func (h *Handler) get(r *http.Request, p Principal, rev int64) (*ckpt.Checkpoint, error) {
	id := r.URL.Query().Get("id")
	if err := ckpt.ValidateID(id); err != nil {
		return nil, badRequest("id: %v", err)
	}
	if !p.mayRead(id) {
		return nil, hidden(id)
	}
	return h.opts.Store.Get(r.Context(), id, rev)
}

type checkpointOut struct {
	Me     me               `json:"me"`
	Now    time.Time        `json:"now"`
	Cursor string           `json:"cursor,omitempty"` // as in the overview
	Row    Row              `json:"row"`
	State  *ckpt.Checkpoint `json:"state"`
	Prompt string           `json:"prompt"`
	CanAct bool             `json:"can_act"`
	// Why explains the presence as `ckpt why` does (render.NewWhy).
	Why render.Why `json:"why"`
	// Family links the parent and the children (family.go).
	Family family `json:"family"`
}

// checkpoint returns everything the checkpoint page shows but the timeline.
func (h *Handler) checkpoint(r *http.Request, p Principal) (any, error) {
	cursor := h.head(r.Context())
	c, err := h.get(r, p, 0)
	if err != nil {
		return nil, err
	}
	s := c.Summary()
	now := h.opts.Now()
	fam, err := h.familyOf(r.Context(), p, c)
	if err != nil {
		return nil, err
	}
	return checkpointOut{Me: h.me(p), Now: now, Cursor: cursor, Row: h.rowOf(&s, now), State: c, Family: fam,
		Prompt: render.NewPrompt(c).Markdown(), CanAct: p.may(c.ID), Why: render.NewWhy(&s, now, h.opts.Thresholds, h.opts.Alive)}, nil
}

// history returns a page of a checkpoint's events.
func (h *Handler) history(r *http.Request, p Principal) (any, error) {
	q := r.URL.Query()
	id := q.Get("id")
	if err := ckpt.ValidateID(id); err != nil {
		return nil, badRequest("id: %v", err)
	}
	if !p.mayRead(id) {
		return nil, hidden(id)
	}
	from, limit := int64(1), defaultEvents
	if v := q.Get("from"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return nil, badRequest("from %q: give a revision of 1 or more", v)
		}
		from = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, badRequest("limit %q: give a positive number", v)
		}
		limit = min(n, maxEvents)
	}
	events, err := h.opts.Store.History(r.Context(), id, from, limit)
	if err != nil {
		return nil, err
	}
	return map[string]any{"events": events, "sentences": h.sentences(r.Context(), id, events)}, nil
}

// hidden is what a principal that reads only its prefix gets for another
// checkpoint: not found, as if it did not exist.
func hidden(id string) error {
	return &apiError{http.StatusNotFound, ckpt.CodeNotFound, "checkpoint " + id + " not found"}
}
