package ckpt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors a Store and the fold return, wrapped with detail. Test with errors.Is.
var (
	ErrNotFound   = errors.New("checkpoint not found")
	ErrExists     = errors.New("checkpoint already exists")
	ErrConflict   = errors.New("revision conflict")
	ErrInvalid    = errors.New("invalid input")
	ErrCorrupt    = errors.New("store damaged")
	ErrCycleLimit = errors.New("cycle limit reached")
	ErrNoStore    = errors.New("no ckpt store")
)

// ConflictError is returned by Append when AppendOptions.IfRev does not match
// the checkpoint's revision. It wraps ErrConflict.
type ConflictError struct {
	ID   string
	Want int64 // the revision the caller expected
	Have int64 // the revision the checkpoint is at
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%v: %s is at revision %d, not %d: someone else wrote first", ErrConflict, e.ID, e.Have, e.Want)
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// DamagedError is returned by List, together with every checkpoint that
// could be read, when some could not: one damaged checkpoint must not hide
// the others from a listing or a monitor. It wraps ErrCorrupt.
type DamagedError struct {
	IDs []string // the checkpoints that could not be read, in ID order
	Err error    // the first of their errors
}

func (e *DamagedError) Error() string {
	ids := e.IDs
	more := ""
	if len(ids) > 5 {
		ids, more = ids[:5], fmt.Sprintf(" and %d more", len(e.IDs)-5)
	}
	return fmt.Sprintf("%v: %d checkpoint(s) could not be read (%s%s): %v",
		ErrCorrupt, len(e.IDs), strings.Join(ids, ", "), more, e.Err)
}

func (e *DamagedError) Unwrap() error { return ErrCorrupt }

// KeyWindow is how many of a checkpoint's most recent events every Store
// searches for a repeated idempotency key. Backends may remember longer.
const KeyWindow = 1000

// AppendOptions are the conditions of an Append.
type AppendOptions struct {
	// IfRev, when > 0, makes the append a compare-and-swap: it fails with a
	// *ConflictError unless the checkpoint is at exactly this revision.
	IfRev int64
	// AsCheckpointAgent records the event as the work of the checkpoint's
	// own agent: when the checkpoint, as the append reads it, has an agent
	// (Agent.ID), that ID replaces the event's Actor.Agent; otherwise the
	// event keeps its own. It is how a write that names no agent (ckpt
	// step ID … after ckpt start ID --agent A) is logged as A's, decided
	// on the state the append already holds instead of a read before it.
	// It does not apply to a create or to a replayed key (the first
	// result stands). Every Store honours it (storetest checks); see
	// Attribute.
	AsCheckpointAgent bool
	// KeyOrigin says where e.Key came from; the zero value, KeyGiven, is
	// the caller's own key, which any earlier event may carry. A Store
	// MUST treat an origin it does not use as KeyGiven.
	KeyOrigin KeyOrigin
}

// KeyOrigin is where an append's idempotency key came from. It lets a
// store skip the lookup of a key that cannot have been used yet, and keep
// such a key out of any index of keys it has: pgstore's ckpt_keys row is
// about a fifth of an append's cost through a keeper (docs/design.md, "A
// key made for one call"). Whatever the origin, Append's contract holds:
// an event whose key is among the last KeyWindow events is replayed.
type KeyOrigin uint8

const (
	// KeyGiven is a key the caller was given (ckpt update --key, a spool's
	// key sent again): it is looked up.
	KeyGiven KeyOrigin = iota
	// KeyNew is a key made for this call (NewKey) and sent for the first
	// time: no event can carry it yet. A store may skip its lookup and
	// leave it out of its key index; the key is still stored with the
	// event, and every later send of it MUST say KeyResent.
	KeyNew
	// KeyResent is a key first sent with KeyNew whose answer was lost (a
	// keeper that went away): the event may have been applied, with its
	// key in the history but not in the store's key index.
	KeyResent
)

// Attribute returns e as an append under o records it after cur (the
// checkpoint's state before the event, nil when it does not exist yet):
// with AsCheckpointAgent and an agent on cur, the event's Actor.Agent is
// cur's agent. Backends call it on the state they apply e to.
func (o AppendOptions) Attribute(cur *Checkpoint, e Event) Event {
	if o.AsCheckpointAgent && cur != nil && cur.Agent.ID != "" {
		e.Actor.Agent = cur.Agent.ID
	}
	return e
}

// AppendResult is what an Append did.
type AppendResult struct {
	// State is the checkpoint after the event (for a replayed key: as it was
	// right after the first event with that key).
	State *Checkpoint
	// Event is the event as stored, with Seq and Sum set.
	Event Event
	// Replayed is true when Event.Key had been applied already and nothing
	// was appended.
	Replayed bool
	// Warnings lists damage found and mended on the way (for example a torn
	// last history line that was cut away); the caller should report them.
	Warnings []string
}

// Filter selects checkpoints in List. A zero Filter selects every checkpoint
// that is not archived.
type Filter struct {
	Status          []Status // any of these; empty means any
	Agent           string   // agent ID or name
	Parent          string
	Label           string
	Prefix          string // ID prefix, e.g. "kai-7/"
	IncludeArchived bool
	// UpdatedSince keeps checkpoints updated at or after it (zero: any).
	UpdatedSince time.Time
	// SeenBefore keeps checkpoints last seen (LastSeen: the later of the
	// last beat and the last update) strictly before it (zero: any); a
	// stale report pushes its oldest threshold down with it.
	SeenBefore time.Time
	// Quiet, when not nil, lets the store leave out the checkpoints
	// Quiet.Omits, counted in Page.Omitted (a stale report's hint; see
	// Quiet). MatchSummary ignores it.
	Quiet *Quiet
}

// Match reports whether c passes the filter.
func (f Filter) Match(c *Checkpoint) bool {
	s := c.Summary()
	return f.MatchSummary(&s)
}

// MatchSummary reports whether s passes the filter: the one definition of
// the filter every backend must agree with.
func (f Filter) MatchSummary(c *Summary) bool {
	if c.Archived != nil && !f.IncludeArchived {
		return false
	}
	if len(f.Status) > 0 {
		ok := false
		for _, s := range f.Status {
			ok = ok || c.Status == s
		}
		if !ok {
			return false
		}
	}
	if f.Agent != "" && c.Agent.ID != f.Agent && c.Agent.Name != f.Agent {
		return false
	}
	if f.Parent != "" && c.Parent != f.Parent {
		return false
	}
	if f.Label != "" {
		ok := false
		for _, l := range c.Labels {
			ok = ok || l == f.Label
		}
		if !ok {
			return false
		}
	}
	if !f.UpdatedSince.IsZero() && c.UpdatedAt.Before(f.UpdatedSince) {
		return false
	}
	if !f.SeenBefore.IsZero() && !c.LastSeen().Before(f.SeenBefore) {
		return false
	}
	return f.Prefix == "" || strings.HasPrefix(c.ID, f.Prefix)
}

// Store keeps checkpoints and their histories. Implementations are safe for
// concurrent use by many goroutines and, for stores shared between
// processes, by many processes; writes to one checkpoint are serialised,
// writes to different checkpoints are not.
//
// Every method validates IDs with ValidateID and returns an error wrapping
// ErrInvalid for a bad one, and ErrNotFound for a checkpoint that does not
// exist.
type Store interface {
	// Append applies e to checkpoint id and makes it durable before it
	// returns: the event is in the history and will survive a crash. The
	// store sets e.Seq, e.Prev and e.Sum, and e.At when it is zero; an e.At
	// more than MaxClockSkew ahead of the store's clock is clamped to the
	// store's now (ClampTime).
	//
	// The event is checked by Apply against the current state first; an
	// event Apply refuses is not stored, and its error is returned. A
	// created event for an existing ID fails with ErrExists, any other event
	// for a missing ID with ErrNotFound.
	//
	// If e.Key is set and one of the last KeyWindow events has the same key,
	// nothing is appended and the result of that event is returned with
	// Replayed set. If opts.IfRev > 0 and the checkpoint is at another
	// revision, Append fails with a *ConflictError and stores nothing
	// (ErrNotFound when the checkpoint does not exist).
	//
	// The checks run in this order: the ID, a repeated key, IfRev, Apply.
	// Checking the key first is what lets a hook retry blindly: a retried
	// created event, or a retry still carrying its old IfRev, replays the
	// first result instead of failing. A refused event records no key.
	Append(ctx context.Context, id string, e Event, opts AppendOptions) (AppendResult, error)

	// Get returns checkpoint id at revision rev, or the latest when rev is 0,
	// with Heartbeat.LastBeat filled from the liveness record. Asking for a
	// revision past the last fails with ErrNotFound, a negative one with
	// ErrInvalid.
	Get(ctx context.Context, id string, rev int64) (*Checkpoint, error)

	// History returns the events of checkpoint id with Seq >= from, in
	// order, at most limit of them (0 means no limit); none when from is
	// past the end.
	History(ctx context.Context, id string, from int64, limit int) ([]Event, error)

	// List returns one page of summaries of the checkpoints that opts
	// matches, ordered by ID: at most opts.Limit (0: all of them), starting
	// after the cursor opts.After. Page.Next is "" on the last page. The
	// backend runs the filter itself, so a page costs about its own size,
	// not the store's. When some checkpoints cannot be read, it returns the
	// others together with a *DamagedError naming them; with any other
	// error the page is empty.
	List(ctx context.Context, opts ListOptions) (Page, error)

	// Beat records a sign of life for checkpoint id at time at (a zero at
	// means now). It does not touch the history, costs no fsync and is not
	// durable: a crash may lose the last beat, which only makes the agent
	// look quieter than it was. Beats are monotonic and clamped: a time
	// more than MaxClockSkew ahead of the store's clock counts as the
	// store's now, and a beat older than the last one changes nothing.
	//
	// sig may also report a presence state and the agent's process; the
	// store keeps them with the beat (Presence.ApplySignal at the beat's
	// time, NextBeat) and returns them in Heartbeat.Presence of Get and
	// List. A signal older than the last beat still sets its state.
	Beat(ctx context.Context, id string, sig Signal) error

	// Delete removes checkpoint id and its whole history. It refuses a
	// checkpoint that is not archived (ErrInvalid): it exists for explicit
	// retention (ckpt prune) and nothing else.
	Delete(ctx context.Context, id string) error

	// Close releases the store's resources.
	Close() error

	// Every store has a change feed (see Watcher): views, monitors and
	// mirrors follow it instead of listing on a timer.
	Watcher
}
