package render

import (
	"fmt"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// PruneEntry is one checkpoint `ckpt prune` removes (or, in a dry run,
// would remove), as its --json prints it.
type PruneEntry struct {
	ID         string    `json:"id"`
	Reason     string    `json:"reason"`
	ArchivedAt time.Time `json:"archived_at"`
	Revisions  int64     `json:"revisions"`
	Removed    bool      `json:"removed"` // false in a dry run, or before the removal
}

// PrunePlan is what prune removes from list at now: the archived
// checkpoints archived more than olderThan before now, in list's order.
// Checkpoints that are not archived are never in it.
func PrunePlan(list []ckpt.Summary, now time.Time, olderThan time.Duration) []PruneEntry {
	plan := []PruneEntry{}
	for _, c := range list {
		if c.Archived == nil || now.Sub(c.Archived.At) <= olderThan {
			continue
		}
		plan = append(plan, PruneEntry{ID: c.ID, Reason: c.Archived.Reason, ArchivedAt: c.Archived.At, Revisions: c.Rev})
	}
	return plan
}

// PruneText writes done as `ckpt prune` prints it: a line per checkpoint,
// "removed ID  (archived REASON at TIME, N revisions)" ("would remove" in
// a dry run), then a last line counting them, or saying that nothing was
// archived more than olderThan ago. Archive reasons go through Terminal.
// The only error is w's.
func PruneText(w io.Writer, done []PruneEntry, dryRun bool, olderThan time.Duration) error {
	out := NewTerminalWriter(w)
	verb := "removed"
	if dryRun {
		verb = "would remove"
	}
	for _, p := range done {
		fmt.Fprintf(out, "%s %s  (archived %s at %s, %s)\n", verb, p.ID, p.Reason,
			p.ArchivedAt.Format(TimeLayout), Plural(int(p.Revisions), "revision", "revisions"))
	}
	switch n := len(done); {
	case n == 0:
		fmt.Fprintf(out, "nothing to prune: no checkpoint was archived more than %s ago\n", ShortDuration(olderThan))
	case dryRun:
		fmt.Fprintf(out, "would remove %s (dry run: nothing deleted; run again without --dry-run to delete)\n", Plural(n, "archived checkpoint", "archived checkpoints"))
	default:
		fmt.Fprintf(out, "removed %s\n", Plural(n, "archived checkpoint and its history", "archived checkpoints and their history"))
	}
	return out.Flush()
}
