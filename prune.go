package ckpt

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Pruned is one checkpoint Prune removed (or, in a dry run, would
// remove), as `ckpt prune --json` prints it.
type Pruned struct {
	ID         string    `json:"id"`
	Reason     string    `json:"reason"`
	ArchivedAt time.Time `json:"archived_at"`
	Revisions  int64     `json:"revisions"`
	Removed    bool      `json:"removed"` // false in a dry run
}

// PruneOptions says what Prune removes.
type PruneOptions struct {
	// OlderThan is how long ago a checkpoint must have been archived; it
	// must be positive.
	OlderThan time.Duration
	// Prefix keeps Prune to IDs that start with it ("" for all).
	Prefix string
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
	// Now is the time OlderThan counts back from.
	Now time.Time
}

// Prune deletes, with their whole history, the archived checkpoints of st
// archived more than o.OlderThan before o.Now, in ID order; a checkpoint
// that is not archived is never removed. It returns what it removed (or
// would remove). A checkpoint it could not delete is left out of the
// result and named in the error, which joins every such failure; the
// others are still removed. A listing error (damage included) stops it
// before it deletes anything. o.OlderThan <= 0 is ErrInvalid.
func Prune(ctx context.Context, st Store, o PruneOptions) ([]Pruned, error) {
	if o.OlderThan <= 0 {
		return nil, fmt.Errorf("%w: prune: the age of the archives to remove must be positive", ErrInvalid)
	}
	var plan []Pruned
	err := EachPage(ctx, st, Filter{IncludeArchived: true, Prefix: o.Prefix}, func(page []Summary) error {
		for _, c := range page {
			if c.Archived != nil && o.Now.Sub(c.Archived.At) > o.OlderThan {
				plan = append(plan, Pruned{ID: c.ID, Reason: c.Archived.Reason, ArchivedAt: c.Archived.At, Revisions: c.Rev})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	done := []Pruned{}
	var failed []error
	for _, p := range plan {
		if !o.DryRun {
			if err := st.Delete(ctx, p.ID); err != nil {
				failed = append(failed, fmt.Errorf("%s: %w", p.ID, err))
				continue
			}
			p.Removed = true
		}
		done = append(done, p)
	}
	if len(failed) > 0 {
		return done, fmt.Errorf("prune could not remove %d of %d checkpoints: %w", len(failed), len(plan), errors.Join(failed...))
	}
	return done, nil
}
