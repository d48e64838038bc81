package ckpt

import (
	"context"
	"time"
)

// ChangeKind says what a Change records.
type ChangeKind string

// Change kinds. An event appended is an "event" change; a Delete is a
// "deleted" change. Beats are liveness, not history: they are not in the feed.
const (
	ChangeEvent   ChangeKind = "event"
	ChangeDeleted ChangeKind = "deleted"
)

// Change is one entry of a store's change feed: checkpoint ID reached
// revision Rev through an event of type Type at time At (or was deleted).
// Cursor resumes the feed just after this change.
type Change struct {
	Cursor string     `json:"cursor"`
	Kind   ChangeKind `json:"kind"`
	ID     string     `json:"id"`
	Rev    int64      `json:"rev,omitempty"`
	Type   EventType  `json:"type,omitempty"`
	At     time.Time  `json:"at"`
}

// CursorNow, given to Watch as from, starts the feed at its current end:
// only changes made after the call are delivered.
const CursorNow = "now"

// Watcher is a store with a change feed: every change of every checkpoint,
// store-wide, in one order.
//
// Watch calls fn with each change after the cursor from ("" is the start
// of the feed the store keeps, CursorNow its current end), in order, and
// blocks waiting for more until ctx is done (it then returns ctx.Err()) or
// fn returns an error (returned as it is). Resuming with the Cursor of the
// last change fn saw delivers every later change exactly once: no gap, no
// repeat, even across a restart of the store or its process, and even when
// writers commit out of order. A cursor the store no longer holds (pruned)
// or never made fails with ErrInvalid.
//
// fn runs on Watch's goroutine; a slow fn delays the feed, never loses it.
type Watcher interface {
	Watch(ctx context.Context, from string, fn func(Change) error) error

	// Head returns the cursor of the feed's current end: watching from it
	// delivers exactly the changes made after Head returned. A listing
	// taken after Head and a Watch from it together miss nothing.
	Head(ctx context.Context) (string, error)
}
