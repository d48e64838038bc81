package web

import (
	"compress/gzip"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// inboxOut is what the page's inbox shows: what needs a person, most
// urgent first, and whether the visitor may answer each one.
type inboxOut struct {
	Now   time.Time                  `json:"now"`
	Items []inboxItem                `json:"items"`
	Count map[ckpt.PresenceState]int `json:"counts"`
}

type inboxItem struct {
	ckpt.InboxEntry
	CanTell bool `json:"can_tell"` // the visitor may answer (tell) it
}

// inbox: GET /ui/api/inbox?prefix=: ckpt.InboxFrom within the visitor's
// prefix (a wider one asked for is narrowed to it).
func (h *Handler) inbox(r *http.Request, p Principal) (any, error) {
	prefix := r.URL.Query().Get("prefix")
	if p.Prefix != "" && !strings.HasPrefix(prefix, p.Prefix) {
		prefix = p.Prefix
	}
	now := h.opts.Now()
	box, err := ckpt.InboxFrom(r.Context(), h.opts.Store, ckpt.Filter{Prefix: prefix, Parent: r.URL.Query().Get("parent")}, now, ckpt.Thresholds{}, h.opts.Alive)
	if err != nil {
		return nil, err
	}
	out := inboxOut{Now: now, Items: make([]inboxItem, 0, len(box.Entries)), Count: box.Counts}
	for _, e := range box.Entries {
		out.Items = append(out.Items, inboxItem{InboxEntry: e, CanTell: p.may(e.ID) && (e.State == "waiting" || e.State == "blocked")})
	}
	return out, nil
}

// sentences says in one sentence what each of events did (the words of
// ckpt log: render.DescribeEvent over the state right after the event),
// replaying the history up to the last of them.
func (h *Handler) sentences(ctx context.Context, id string, events []ckpt.Event) []string {
	out := make([]string, len(events))
	if len(events) == 0 {
		return out
	}
	all, err := h.opts.Store.History(ctx, id, 1, int(events[len(events)-1].Seq))
	var c *ckpt.Checkpoint
	at := map[int64]int{}
	for i, e := range events {
		at[e.Seq] = i
	}
	for _, e := range all {
		if err == nil {
			c, err = ckpt.Apply(id, c, e)
		}
		if i, ok := at[e.Seq]; ok {
			state := c
			if err != nil || state == nil {
				state = &ckpt.Checkpoint{ID: id}
			}
			out[i] = render.DescribeEvent(state, e)
		}
	}
	for i, e := range events {
		if out[i] == "" {
			out[i] = render.DescribeEvent(&ckpt.Checkpoint{ID: id}, e)
		}
	}
	return out
}

// gzipWriter writes a response through gzip.
type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g gzipWriter) Write(b []byte) (int, error) { return g.gz.Write(b) }

// compressed returns w compressing what is written to it when the request
// accepts gzip (a page of rows compresses about tenfold), and the function
// that ends the stream.
func compressed(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	w.Header().Add("Vary", "Accept-Encoding")
	if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		return w, func() {}
	}
	w.Header().Set("Content-Encoding", "gzip")
	gz := gzip.NewWriter(w)
	return gzipWriter{w, gz}, func() { gz.Close() }
}
