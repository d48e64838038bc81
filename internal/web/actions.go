package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// actionIn is a request to act on a checkpoint.
type actionIn struct {
	Action  string `json:"action"` // takeover, abandon, restore, note, tell, unblock
	ID      string `json:"id"`
	Agent   string `json:"agent,omitempty"`   // takeover: the new agent
	Rev     int64  `json:"rev,omitempty"`     // restore: the revision to bring back
	Text    string `json:"text,omitempty"`    // note, tell: the text; abandon: the reason
	Blocker string `json:"blocker,omitempty"` // unblock: the blocker's ID, "" for all
}

type actionOut struct {
	Rev        int64  `json:"rev"`
	ArchivedAs string `json:"archived_as,omitempty"`
}

// maxText bounds a note or a reason typed into the page.
const maxText = 4000

// action runs one action: the same library call the CLI makes.
func (h *Handler) action(r *http.Request, p Principal) (any, error) {
	var in actionIn
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, badRequest("action: %v", err)
	}
	if err := ckpt.ValidateID(in.ID); err != nil {
		return nil, badRequest("id: %v", err)
	}
	if len(in.Text) > maxText || len(in.Agent) > 200 {
		return nil, badRequest("text or agent too long")
	}
	if !p.may(in.ID) {
		return nil, &apiError{http.StatusForbidden, ckpt.CodeForbidden, fmt.Sprintf("%s may not act on %s", p.Name, in.ID)}
	}
	ctx, st := r.Context(), h.store(p)
	l := ckpt.Lifecycle{At: h.opts.Now(), Actor: p.actor()}
	switch in.Action {
	case "takeover":
		agent := strings.TrimSpace(in.Agent)
		if agent == "" {
			return nil, badRequest("a takeover needs the new agent's name")
		}
		c, archive, err := ckpt.TakeOverCheckpoint(ctx, st, in.ID, ckpt.Agent{ID: agent, Name: agent}, l)
		if err != nil {
			return nil, err
		}
		return actionOut{Rev: c.Rev, ArchivedAs: archive}, nil
	case "restore":
		c, err := ckpt.RestoreCheckpoint(ctx, st, in.ID, in.Rev, l)
		if err != nil {
			return nil, err
		}
		return actionOut{Rev: c.Rev}, nil
	case "abandon":
		return h.update(r, st, in.ID, func(c *ckpt.Checkpoint) (ckpt.Event, error) {
			if c.Status.Final() {
				return ckpt.Event{}, fmt.Errorf("%w: %s is %s already", ckpt.ErrInvalid, c.ID, c.Status)
			}
			reason := in.Text
			if reason == "" {
				reason = "marked abandoned from the dashboard"
			}
			return request.NewEvent(request.Status{Status: ckpt.StatusAbandoned, Reason: reason}, request.Write{At: l.At, Actor: l.Actor})
		})
	case "note":
		if strings.TrimSpace(in.Text) == "" {
			return nil, badRequest("a note needs text")
		}
		return h.update(r, st, in.ID, func(*ckpt.Checkpoint) (ckpt.Event, error) {
			return request.NewEvent(request.Note{Text: in.Text}, request.Write{At: l.At, Actor: l.Actor})
		})
	case "tell":
		// A message for the agent: the sender is the visitor's actor.
		if strings.TrimSpace(in.Text) == "" {
			return nil, badRequest("a message needs text")
		}
		return h.update(r, st, in.ID, func(*ckpt.Checkpoint) (ckpt.Event, error) {
			return ckpt.NewEvent(ckpt.EventTold, l.At, l.Actor, ckpt.Tell{Text: in.Text})
		})
	case "unblock":
		return h.update(r, st, in.ID, func(c *ckpt.Checkpoint) (ckpt.Event, error) {
			if len(c.ActiveBlockers()) == 0 {
				return ckpt.Event{}, fmt.Errorf("%w: %s has no active blocker", ckpt.ErrInvalid, c.ID)
			}
			return request.NewEvent(request.Unblock{ID: in.Blocker}, request.Write{At: l.At, Actor: l.Actor})
		})
	}
	return nil, badRequest("unknown action %q: use takeover, abandon, restore, note, tell or unblock", in.Action)
}

// update appends the event fn builds from the current state (ckpt.Update).
func (h *Handler) update(r *http.Request, st ckpt.Store, id string, fn func(*ckpt.Checkpoint) (ckpt.Event, error)) (any, error) {
	res, err := ckpt.Update(r.Context(), st, id, fn)
	if err != nil {
		return nil, err
	}
	return actionOut{Rev: res.State.Rev}, nil
}
