package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// SourcePrefix starts the Snapshot.Source of every event a plan sync
// stores ("plan:" and the plan's path as the user gave it), so a mirror of
// the plan format knows the event came from plan.md and does not write it
// back.
const SourcePrefix = "plan:"

// StoreOptions are how StoreSync writes.
type StoreOptions struct {
	// Now is the time of the event and of blockers cleared by the sync.
	Now time.Time
	// Actor is recorded on the event.
	Actor ckpt.Actor
	// Source names the plan in the event: SourcePrefix + Source.
	Source string
	// Key makes the write idempotent (a repeated key stores nothing).
	Key string
	// IfRev, when > 0, stores only if the checkpoint is at that revision
	// (a *ckpt.ConflictError otherwise).
	IfRev int64
}

// Stored is what StoreSync did.
type Stored struct {
	// State is the checkpoint after the sync (as it was when nothing
	// changed, or when a repeated key stored nothing).
	State *ckpt.Checkpoint
	// Stored is true when an event was appended.
	Stored bool
	// Warnings are the store's remarks (damage mended on the way).
	Warnings []string
}

// StoreSync stores the plan's checkpoint p (SyncResult.Checkpoint) as id:
// an imported event when the checkpoint is new, else a synced event with p
// laid over the current state (see Overlay), unless that changes nothing.
//
// The overlay is a read-modify-write done with ckpt.Update: an event
// another writer (a hook, an agent) appends between the read and the write
// makes the write conflict, and the overlay is made again over the newer
// state, so that event is kept.
func StoreSync(ctx context.Context, st ckpt.Store, id string, p *ckpt.Checkpoint, o StoreOptions) (Stored, error) {
	source := SourcePrefix + o.Source
	for attempt := 0; attempt < 2; attempt++ {
		res, err := ckpt.Update(ctx, st, id, func(cur *ckpt.Checkpoint) (ckpt.Event, error) {
			if o.IfRev > 0 && cur.Rev != o.IfRev {
				return ckpt.Event{}, &ckpt.ConflictError{ID: id, Want: o.IfRev, Have: cur.Rev}
			}
			next := Overlay(cur, p, o.Now)
			if sameState(cur, next) {
				return ckpt.Event{}, ckpt.ErrNoChange
			}
			// A sync that changes something is a change made now.
			next.UpdatedAt = time.Time{}
			return snapshotEvent(ckpt.EventSynced, next, source, false, o)
		})
		if !errors.Is(err, ckpt.ErrNotFound) {
			if err != nil {
				return Stored{Warnings: res.Warnings}, err
			}
			return Stored{State: res.State, Stored: res.Event.Seq > 0 && !res.Replayed, Warnings: res.Warnings}, nil
		}
		e, err := snapshotEvent(ckpt.EventImported, p, source, true, o)
		if err != nil {
			return Stored{}, err
		}
		res, err = st.Append(ctx, id, e, ckpt.AppendOptions{IfRev: o.IfRev})
		if errors.Is(err, ckpt.ErrExists) {
			continue // created meanwhile by another writer: lay the plan over it
		}
		if err != nil {
			return Stored{Warnings: res.Warnings}, err
		}
		return Stored{State: res.State, Stored: !res.Replayed, Warnings: res.Warnings}, nil
	}
	return Stored{}, fmt.Errorf("%w: %s was created and removed again while the plan was stored: sync again", ckpt.ErrConflict, id)
}

// snapshotEvent is the event that stores state c. A new one creates the
// checkpoint and is refused if it exists (so a checkpoint created
// meanwhile is never overwritten whole).
func snapshotEvent(t ckpt.EventType, c *ckpt.Checkpoint, source string, isNew bool, o StoreOptions) (ckpt.Event, error) {
	e, err := ckpt.NewEvent(t, o.Now, o.Actor, ckpt.Snapshot{State: *c, Source: source, New: isNew})
	if err != nil {
		return ckpt.Event{}, err
	}
	e.Key = o.Key
	return e, nil
}

// sameState reports whether two states agree on everything a sync can
// change (revision, times of the write and heartbeat aside).
func sameState(a, b *ckpt.Checkpoint) bool {
	norm := func(c *ckpt.Checkpoint) string {
		x := c.Clone()
		x.Rev, x.UpdatedAt, x.Heartbeat.LastBeat = 0, time.Time{}, time.Time{}
		b, _ := json.Marshal(x)
		return string(b)
	}
	return norm(a) == norm(b)
}

// Overlay lays the plan's checkpoint p over the stored state cur and
// returns the result (cur is not changed): plan.md is the source of truth
// for title, steps (tasks), acceptance, blockers, progress, phase and
// current step; everything else (agent, session, files, errors, notes,
// labels, cycles, resume) stays as ckpt recorded it. Where a box and the
// stored status agree (unchecked and in progress, checked and skipped) the
// stored status and its step's output and notes are kept. Decisions are a
// log: the plan's are added to those recorded. A stored active blocker the
// plan no longer has is cleared at now. It takes time linear in the size
// of both states.
func Overlay(cur, p *ckpt.Checkpoint, now time.Time) *ckpt.Checkpoint {
	c := cur.Clone()
	if p.Title != "" {
		c.Title = p.Title
	}
	if p.Parent != "" {
		c.Parent = p.Parent
	}
	steps, inProgress := overlaySteps(cur.Steps, p.Steps)
	c.Steps = steps
	c.Acceptance = overlayAcceptance(cur.Acceptance, p.Acceptance)
	c.Progress = p.Progress
	c.Phase, c.CurrentStep = p.Phase, p.CurrentStep
	if inProgress != "" {
		c.CurrentStep = inProgress
	}
	known := make(map[string]bool, len(c.Decisions))
	for _, d := range c.Decisions {
		known[d.Text] = true
	}
	for _, d := range p.Decisions {
		if !known[d.Text] {
			known[d.Text] = true
			if d.At.IsZero() {
				d.At = now
			}
			c.Decisions = append(c.Decisions, d)
		}
	}
	c.Blockers = overlayBlockers(cur.Blockers, p.Blockers, now)
	overlayStatus(c, cur, p, now)
	if c.Meta == nil {
		c.Meta = map[string]json.RawMessage{}
	}
	for _, k := range []string{MetaPlan, MetaFields} {
		if v, ok := p.Meta[k]; ok {
			c.Meta[k] = v
		} else {
			delete(c.Meta, k)
		}
	}
	if p.Context.Notes != "" {
		c.Context.Notes = ckpt.BoundNotes(p.Context.Notes) // as the stored state keeps them
	}
	return c
}

// overlaySteps returns the plan's steps, each keeping what ckpt recorded
// of the stored step with its ID: a status that agrees with the box, the
// times, output, notes and author. inProgress labels the first kept step
// still in progress, "" when there is none.
func overlaySteps(cur, fromPlan []ckpt.Step) (steps []ckpt.Step, inProgress string) {
	at := make(map[string]int, len(cur))
	for i := len(cur) - 1; i >= 0; i-- {
		at[cur[i].ID] = i
	}
	out := make([]ckpt.Step, 0, len(fromPlan))
	for _, s := range fromPlan {
		if i, ok := at[s.ID]; ok {
			old := cur[i]
			if old.Status.Finished() == s.Status.Finished() {
				s.Status = old.Status
				if s.CompletedAt == nil {
					s.CompletedAt = old.CompletedAt
				}
			}
			if s.StartedAt == nil {
				s.StartedAt = old.StartedAt
			}
			s.Output, s.Notes = old.Output, old.Notes
			if s.By == "" {
				s.By = old.By
			}
			if s.Status == ckpt.StepInProgress && inProgress == "" {
				inProgress = s.Label()
			}
		}
		out = append(out, s)
	}
	return out, inProgress
}

// overlayAcceptance returns the plan's criteria, keeping the stored
// verification time of one met on both sides.
func overlayAcceptance(cur, fromPlan []ckpt.Criterion) []ckpt.Criterion {
	at := make(map[string]int, len(cur))
	for i := len(cur) - 1; i >= 0; i-- {
		at[cur[i].ID] = i
	}
	out := slices.Clone(fromPlan)
	for i, a := range out {
		if j, ok := at[a.ID]; ok && a.Met && cur[j].Met && a.VerifiedAt == nil {
			out[i].VerifiedAt = cur[j].VerifiedAt
		}
	}
	return out
}

// overlayStatus takes the plan's status, except that work the plan does
// not call done keeps a waiting, failed or abandoned status, and work in
// progress is not set back to pending.
func overlayStatus(c, cur, p *ckpt.Checkpoint, now time.Time) {
	c.Status, c.StatusReason, c.CompletedAt = p.Status, "", p.CompletedAt
	switch {
	case p.Status != ckpt.StatusDone && (cur.Status == ckpt.StatusWaiting || cur.Status == ckpt.StatusFailed || cur.Status == ckpt.StatusAbandoned),
		p.Status == ckpt.StatusPending && cur.Status == ckpt.StatusInProgress:
		c.Status, c.StatusReason, c.CompletedAt = cur.Status, cur.StatusReason, cur.CompletedAt
	case p.Status == ckpt.StatusDone && c.CompletedAt == nil:
		t := now
		c.CompletedAt = &t
	}
}

// overlayBlockers keeps the stored blockers that were cleared, keeps the
// active ones the plan still has (same text), clears the others at now,
// and adds the plan's new ones.
func overlayBlockers(cur, fromPlan []ckpt.Blocker, now time.Time) []ckpt.Blocker {
	out := slices.Clone(cur)
	want := map[string]bool{}
	for _, b := range fromPlan {
		want[b.Text] = true
	}
	have := map[string]bool{}
	for i := range out {
		if !out[i].Active() {
			continue
		}
		if want[out[i].Text] {
			have[out[i].Text] = true
			continue
		}
		t := now
		out[i].ClearedAt = &t
	}
	used := map[string]bool{}
	for _, b := range out {
		used[b.ID] = true
	}
	for _, b := range fromPlan {
		if have[b.Text] {
			continue
		}
		have[b.Text] = true
		for n := len(out) + 1; b.ID == "" || used[b.ID]; n++ {
			b.ID = "b" + strconv.Itoa(n)
		}
		used[b.ID] = true
		if b.Since.IsZero() {
			b.Since = now
		}
		out = append(out, b)
	}
	return out
}
