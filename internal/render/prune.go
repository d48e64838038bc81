package render

import (
	"fmt"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// PruneText writes done as `ckpt prune` prints it: a line per checkpoint,
// "removed ID  (archived REASON at TIME, N revisions)" ("would remove" in
// a dry run), then a last line counting them, or saying that nothing was
// archived more than olderThan ago. Archive reasons go through Terminal.
// The only error is w's.
func PruneText(w io.Writer, done []ckpt.Pruned, dryRun bool, olderThan time.Duration) error {
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
