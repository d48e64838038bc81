package web

import (
	"context"
	"errors"

	"github.com/ckpt-dev/ckpt"
)

// familyLink is a parent or child of a checkpoint as its page links it.
type familyLink struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Presence string `json:"presence,omitempty"`
	// Exists is false for a parent that is only a name its children share
	// (a plan or epic never created as a checkpoint): the page then links
	// to the overview filtered by it.
	Exists bool `json:"exists"`
}

// family is the checkpoint's links both ways.
type family struct {
	Parent   *familyLink  `json:"parent,omitempty"`
	Children []familyLink `json:"children"`
	// MoreChildren is set when there are more than maxChildren: the page
	// links to the overview filtered by parent for all of them.
	MoreChildren bool `json:"more_children,omitempty"`
}

const maxChildren = 50

// familyOf finds c's parent (Checkpoint.Parent) and its children (the
// checkpoints whose parent is c), as p may read them.
func (h *Handler) familyOf(ctx context.Context, p Principal, c *ckpt.Checkpoint) (family, error) {
	now := h.opts.Now()
	out := family{Children: []familyLink{}}
	if c.Parent != "" && p.mayRead(c.Parent) {
		link := familyLink{ID: c.Parent}
		if ckpt.ValidateID(c.Parent) == nil {
			if pc, err := h.opts.Store.Get(ctx, c.Parent, 0); err == nil {
				s := pc.Summary()
				link = familyLink{ID: pc.ID, Title: pc.Title, Presence: h.rowOf(&s, now).Presence, Exists: true}
			} else if !errors.Is(err, ckpt.ErrNotFound) {
				return out, err
			}
		}
		out.Parent = &link
	}
	page, err := h.opts.Store.List(ctx, ckpt.ListOptions{Filter: ckpt.Filter{Parent: c.ID}, Limit: maxChildren + 1})
	var d *ckpt.DamagedError
	if err != nil && !errors.As(err, &d) {
		return out, err
	}
	for i := range page.Items {
		s := &page.Items[i]
		if !p.mayRead(s.ID) {
			continue
		}
		if len(out.Children) == maxChildren {
			out.MoreChildren = true
			break
		}
		out.Children = append(out.Children, familyLink{ID: s.ID, Title: s.Title, Presence: h.rowOf(s, now).Presence, Exists: true})
	}
	out.MoreChildren = out.MoreChildren || page.Next != ""
	return out, nil
}
