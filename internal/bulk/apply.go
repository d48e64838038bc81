package bulk

import (
	"context"
	"errors"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// errSkip ends an update whose action no longer applies to the state read.
type errSkip struct{ why string }

func (e errSkip) Error() string { return e.why }

// apply runs r's action on checkpoint id: the same call the single command
// makes, deciding again on the state it swaps (a checkpoint done since the
// preview is skipped, not done twice).
func apply(ctx context.Context, env Env, r Request, id string) Item {
	w := request.Write{At: env.Now, Actor: env.Actor}
	var res ckpt.AppendResult
	var err error
	switch r.Action {
	case Tell:
		res, err = request.Append(ctx, env.Store, id, request.Tell{Text: r.Text}, w)
	case Note:
		res, err = request.Append(ctx, env.Store, id, request.Note{Text: r.Text}, w)
	case Done, Abandon:
		st, reason := ckpt.StatusDone, r.Text
		if r.Action == Abandon {
			st = ckpt.StatusAbandoned
			if reason == "" {
				reason = "abandoned in bulk"
			}
		}
		res, err = update(ctx, env, id, func(c *ckpt.Checkpoint) (request.Request, error) {
			if c.Status.Final() {
				return nil, errSkip{"it is " + string(c.Status) + " already"}
			}
			return request.Status{Status: st, Reason: reason}, nil
		})
	case Unblock:
		res, err = update(ctx, env, id, func(c *ckpt.Checkpoint) (request.Request, error) {
			if len(c.ActiveBlockers()) == 0 {
				return nil, errSkip{"it has no active blocker"}
			}
			return request.Unblock{}, nil
		})
	case Archive:
		reason := r.Text
		if reason == "" {
			reason = "complete"
		}
		var already bool
		res, already, err = ckpt.ArchiveCheckpoint(ctx, env.Store, id, reason, ckpt.Lifecycle{At: env.Now, Actor: env.Actor})
		if err == nil && already {
			err = errSkip{"it is archived already"}
		}
	}
	return itemOf(id, res, err)
}

// update is ckpt.Update with the event built from the request fn returns.
func update(ctx context.Context, env Env, id string, fn func(*ckpt.Checkpoint) (request.Request, error)) (ckpt.AppendResult, error) {
	return ckpt.Update(ctx, env.Store, id, func(c *ckpt.Checkpoint) (ckpt.Event, error) {
		rq, err := fn(c)
		if err != nil {
			return ckpt.Event{}, err
		}
		return request.NewEvent(rq, request.Write{At: env.Now, Actor: env.Actor})
	})
}

func itemOf(id string, res ckpt.AppendResult, err error) Item {
	var skip errSkip
	var refused *ckpt.RefusedError
	switch {
	case err == nil:
		return Item{ID: id, Outcome: Applied, Rev: res.State.Rev}
	case errors.As(err, &skip):
		return Item{ID: id, Outcome: Skipped, Reason: skip.why}
	case errors.As(err, &refused):
		return Item{ID: id, Outcome: Skipped, Reason: err.Error()}
	case errors.Is(err, ckpt.ErrForbidden):
		return Item{ID: id, Outcome: Forbidden, Reason: err.Error()}
	}
	return Item{ID: id, Outcome: Failed, Reason: err.Error()}
}
