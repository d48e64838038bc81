package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// PruneOptions are the inputs of `ckpt prune`.
type PruneOptions struct {
	common
	OlderThan time.Duration // required: archived longer ago than this
	Prefix    string
	DryRun    bool
	JSON      bool
}

func newPruneCmd(f *cmdutil.Factory) *cobra.Command {
	o := &PruneOptions{common: newCommon(f)}
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
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		if older == "" {
			return cmdutil.Usagef("prune needs --older-than DURATION, e.g. --older-than 30d: it deletes history, so say how old")
		}
		d, err := request.ParseSpan("--older-than", older)
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
	return o.withStore(func(st ckpt.Store) error {
		done, pruneErr := ckpt.Prune(ctx, st, ckpt.PruneOptions{OlderThan: o.OlderThan, Prefix: o.Prefix, DryRun: o.DryRun, Now: o.Now()})
		if done == nil {
			return pruneErr // the listing failed: nothing was removed
		}
		var err error
		if o.JSON {
			err = cmdutil.WriteJSON(o.IO.Out, done)
		} else {
			err = render.PruneText(o.IO.Out, done, o.DryRun, o.OlderThan)
		}
		return errors.Join(err, pruneErr)
	})
}
