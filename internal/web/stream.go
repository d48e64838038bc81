package web

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
)

// frame is one change as a page's stream sends it, encoded once for all
// pages (feed.Item.Memo).
type frame struct {
	cursor string
	id     string // the checkpoint's ID
	bytes  []byte
}

// changeOut is a change as the page reads it: the change, and for an
// event the checkpoint's row as it was read after the change.
type changeOut struct {
	ckpt.Change
	Row json.RawMessage `json:"row,omitempty"`
}

// rowFrame keys the dashboard's encoding of a change in feed.Item.Memo.
type rowFrame struct{}

// frameOf returns the event of change it, carrying its row: the row is read
// once for every page (the first page to need it reads it).
func (h *Handler) frameOf(it *feed.Item) frame {
	b := it.Memo(rowFrame{}, func() []byte {
		out := changeOut{Change: it.Change}
		if it.Kind == ckpt.ChangeEvent {
			// Not the page's context: the row is every page's.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			out.Row = h.rowJSON(ctx, it.ID)
		}
		data, _ := json.Marshal(out)
		return feed.Frame(it.Cursor, "change", data)
	})
	return frame{cursor: it.Cursor, id: it.ID, bytes: b}
}

// encode appends to dst what p's page is sent for a batch of changes:
// the changes p may see, coalesced, and when the last change of the batch
// is not one of them, an event that moves the page's Last-Event-ID past
// it.
func (h *Handler) encode(dst []byte, p Principal, items []*feed.Item) []byte {
	fs := make([]frame, 0, len(items))
	for _, it := range items {
		if p.mayRead(it.ID) {
			fs = append(fs, h.frameOf(it))
		}
	}
	out := coalesce(dst, fs)
	if last := items[len(items)-1]; !p.mayRead(last.ID) {
		out = append(out, feed.IDOnly(last.Cursor)...)
	}
	return out
}

// coalesce appends to dst the events of frames fs as one write: only the
// last change of each checkpoint (each change carries the whole row, so
// an earlier one of the same checkpoint says nothing the later does not),
// in feed order. The last change is always kept, so a reconnect resumes
// (Last-Event-ID) after everything written. The frames' bytes are every
// page's (feed.Item.Memo): they are copied, never appended to.
func coalesce(dst []byte, fs []frame) []byte {
	if len(fs) > smallBatch {
		last := make(map[string]int, len(fs))
		for i, f := range fs {
			last[f.id] = i
		}
		for i, f := range fs {
			if last[f.id] == i {
				dst = append(dst, f.bytes...)
			}
		}
		return dst
	}
	for i, f := range fs {
		if !slices.ContainsFunc(fs[i+1:], func(g frame) bool { return g.id == f.id }) {
			dst = append(dst, f.bytes...)
		}
	}
	return dst
}

// smallBatch is the most frames coalesce compares pairwise, without a map:
// a page's usual batch (a quarter second of changes).
const smallBatch = 32
