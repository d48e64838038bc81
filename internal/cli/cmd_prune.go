package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/render"
)

// PruneOptions are the inputs of `ckpt prune`.
type PruneOptions struct {
	common
	OlderThan time.Duration // required: archived longer ago than this
	Prefix    string
	DryRun    bool
	JSON      bool
}

// pruned is one checkpoint prune removed (or, with --dry-run, would remove).
type pruned struct {
	ID         string    `json:"id"`
	Reason     string    `json:"reason"`
	ArchivedAt time.Time `json:"archived_at"`
	Revisions  int64     `json:"revisions"`
	Removed    bool      `json:"removed"` // false with --dry-run
}

func newPruneCmd(f *factory) *cobra.Command {
	o := &PruneOptions{common: f.common()}
	var older string
	cmd := &cobra.Command{
		Use:   "prune --older-than DURATION",
		Short: "Delete archived checkpoints archived longer ago than a duration",
		Long: `Delete, with their whole history, the archived checkpoints (ckpt archive,
and the copies takeover and restart make) whose archive time is longer ago
than --older-than. Checkpoints that are not archived are never touched: this
is the only command that deletes history, and only what was archived.

It prints each checkpoint it removed (--dry-run: would remove) with its
archive reason, time and number of revisions; --json prints them as a JSON
array. Durations are Go durations (36h) or whole days (30d).`,
		Example: `  ckpt prune --older-than 30d --dry-run
  ckpt prune --older-than 30d`,
		Args: exactArgs(0, "no arguments"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		if older == "" {
			return usagef("prune needs --older-than DURATION, e.g. --older-than 30d: it deletes history, so say how old")
		}
		d, err := parseSpan("--older-than", older)
		if err != nil {
			return err
		}
		o.OlderThan = d
		return runPrune(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&older, "older-than", "", "delete checkpoints archived longer ago than `DURATION` (required), e.g. 30d")
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`")
	fl.BoolVar(&o.DryRun, "dry-run", false, "only print what would be removed")
	fl.BoolVar(&o.JSON, "json", false, "print what was removed as a JSON array")
	return cmd
}

func runPrune(ctx context.Context, o *PruneOptions) error {
	if o.OlderThan <= 0 {
		return fmt.Errorf("%w: --older-than must be positive, e.g. --older-than 30d", ckpt.ErrInvalid)
	}
	now := o.Now()
	return o.withStore(func(st ckpt.Store) error {
		list, err := ckpt.ListAll(ctx, st, ckpt.Filter{IncludeArchived: true, Prefix: o.Prefix})
		if err != nil {
			return err
		}
		out := []pruned{}
		human := render.NewTerminalWriter(o.IO.Out) // archive reasons are stored text
		var failed []error
		for _, c := range list {
			if c.Archived == nil || now.Sub(c.Archived.At) <= o.OlderThan {
				continue
			}
			p := pruned{ID: c.ID, Reason: c.Archived.Reason, ArchivedAt: c.Archived.At, Revisions: c.Rev}
			if !o.DryRun {
				if err := st.Delete(ctx, c.ID); err != nil {
					failed = append(failed, fmt.Errorf("%s: %w", c.ID, err))
					continue
				}
				p.Removed = true
			}
			out = append(out, p)
			if !o.JSON {
				verb := "removed"
				if o.DryRun {
					verb = "would remove"
				}
				fmt.Fprintf(human, "%s %s  (archived %s at %s, %s)\n", verb, p.ID, p.Reason,
					p.ArchivedAt.Format(render.TimeLayout), render.Plural(int(p.Revisions), "revision", "revisions"))
			}
		}
		if o.JSON {
			if err := writeJSON(o.IO.Out, out); err != nil {
				return err
			}
		} else {
			writePruneSummary(human, o, len(out))
			if err := human.Flush(); err != nil {
				return err
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("prune could not remove %s: %w", render.Plural(len(failed), "checkpoint", "checkpoints"), errors.Join(failed...))
		}
		return nil
	})
}

// writePruneSummary prints the last line of a prune.
func writePruneSummary(w io.Writer, o *PruneOptions, n int) {
	switch {
	case n == 0:
		fmt.Fprintf(w, "nothing to prune: no checkpoint was archived more than %s ago\n", render.ShortDuration(o.OlderThan))
	case o.DryRun:
		fmt.Fprintf(w, "would remove %s (dry run: nothing deleted; run again without --dry-run to delete)\n", render.Plural(n, "archived checkpoint", "archived checkpoints"))
	default:
		fmt.Fprintf(w, "removed %s\n", render.Plural(n, "archived checkpoint and its history", "archived checkpoints and their history"))
	}
}
