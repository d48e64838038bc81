package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// LogOptions are the inputs of `ckpt log`.
type LogOptions struct {
	common
	ID   string
	From int64 // first seq shown; 0 or 1: from the start
	JSON bool
}

func newLogCmd(f *cmdutil.Factory) *cobra.Command {
	o := &LogOptions{common: newCommon(f)}
	cmd := &cobra.Command{
		Use:   "log ID",
		Short: "Show a checkpoint's history, one event per line",
		Long: `Show the events of checkpoint ID in order: revision, time, type, actor,
idempotency key and what the event did. --json prints one JSON object per
line per event with seq, at, type, actor, key, data, prev and sum (the
chained checksum).`,
		Example: `  ckpt log kai-7/secondary-a
  ckpt log kai-7/secondary-a --from 5 --json`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runLog(ctx, o)
	})
	cmd.Flags().Int64Var(&o.From, "from", 0, "start at revision `N`")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print one JSON object per event")
	return cmd
}

func runLog(ctx context.Context, o *LogOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if o.From < 0 {
		return fmt.Errorf("%w: --from %d: give a revision of 1 or more", ckpt.ErrInvalid, o.From)
	}
	return o.withStore(func(st ckpt.Store) error {
		events, err := st.History(ctx, o.ID, max(o.From, 1), 0)
		if err != nil {
			return err
		}
		if o.JSON {
			return render.LogJSON(o.IO.Out, events)
		}
		var before *ckpt.Checkpoint
		if o.From > 1 {
			if before, err = st.Get(ctx, o.ID, o.From-1); err != nil {
				return err
			}
		}
		return render.LogText(o.IO.Out, o.ID, before, events)
	})
}
