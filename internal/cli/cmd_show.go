package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// ShowOptions are the inputs of `ckpt show`.
type ShowOptions struct {
	common
	ID   string
	Rev  int64 // 0: the latest
	JSON bool
}

func newShowCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ShowOptions{common: newCommon(f)}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a checkpoint: status, progress, steps, decisions, blockers, resume info",
		Long: `Show checkpoint ID as a readable summary, or with --json as the full state
(the same JSON the store keeps, plus "presence": {state, since, why} as
ckpt status derives it now, for a live checkpoint). --rev N shows it as it
was after revision N.`,
		Example: `  ckpt show kai-7/secondary-a
  ckpt show kai-7/secondary-a --json
  ckpt show kai-7/secondary-a --rev 3`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runShow(ctx, o)
	})
	cmd.Flags().Int64Var(&o.Rev, "rev", 0, "show the checkpoint as it was after revision `N`")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checkpoint as JSON")
	return cmd
}

func runShow(ctx context.Context, o *ShowOptions) error {
	if err := checkIDRev(o.ID, o.Rev); err != nil {
		return err
	}
	return o.withStore(func(st ckpt.Store) error {
		c, err := st.Get(ctx, o.ID, o.Rev)
		if errors.Is(err, ckpt.ErrNotFound) && o.Rev > 0 {
			if latest, lerr := st.Get(ctx, o.ID, 0); lerr == nil {
				return fmt.Errorf("%w: %s has %d revisions, not %d: see them with ckpt log %s", ckpt.ErrNotFound, o.ID, latest.Rev, o.Rev, o.ID)
			}
		}
		if err != nil {
			return err
		}
		if o.Rev == 0 {
			one := []*ckpt.Checkpoint{c}
			ckpt.RereadDead(ctx, st, one, o.Now(), ckpt.Thresholds{}, process.Alive)
			c = one[0]
		}
		if o.JSON {
			return cmdutil.WriteJSON(o.IO.Out, render.NewShown(c, o.Rev == 0, o.Now(), ckpt.Thresholds{}, process.Alive))
		}
		return render.Show(o.IO.Out, c, o.Now(), process.Alive)
	})
}

// checkIDRev checks a command's checkpoint ID and its --rev (0: the
// latest).
func checkIDRev(id string, rev int64) error {
	if err := ckpt.ValidateID(id); err != nil {
		return err
	}
	if rev < 0 {
		return fmt.Errorf("%w: --rev %d: give a revision of 1 or more (see ckpt log %s)", ckpt.ErrInvalid, rev, id)
	}
	return nil
}
