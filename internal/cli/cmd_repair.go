package cli

import (
	"context"
	"fmt"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/spf13/cobra"
)

func newRepairCmd(f *cmdutil.Factory) *cobra.Command {
	o := &CheckOptions{IO: f.Env.IOStreams, Open: func() (ckpt.Store, *mirror.List, error) { return openCheckedStore(f) }}
	cmd := &cobra.Command{
		Use:   "repair [ID...]",
		Short: "Mend what check finds, keeping every valid event",
		Long: `Repair every checkpoint, or the ones named: rebuild state files and backups
from the history, and keep a damaged history's valid prefix while moving the
rest aside into a file (nothing is deleted). Prints what it fixed. Exit code
7 when an error remains that repair could not fix.`,
		Example: `  ckpt repair
  ckpt repair kai-7/secondary-a`,
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.IDs = args
		return runRepair(ctx, o)
	})
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}

func runRepair(ctx context.Context, o *CheckOptions) error {
	return o.withStore(func(st ckpt.Store, mirrors *mirror.List) error {
		rp, ok := ckpt.As[ckpt.Repairer](st)
		if !ok {
			return errNoCapability("repair")
		}
		rep, err := rp.Repair(ctx, o.IDs)
		if err != nil {
			return err
		}
		if mirrors != nil {
			rep.Problems = append(rep.Problems, mirror.Repair(ctx, st, *mirrors, o.IDs, mirrorOptions(o.IO.ErrOut, nil))...)
		}
		if err := printReport(o.IO.Out, rep, o.JSON, true); err != nil {
			return err
		}
		if left := rep.Errors(); left > 0 {
			return fmt.Errorf("%w: %d error(s) could not be repaired: see each one's repair above (ckpt check lists them again)", ckpt.ErrCorrupt, left)
		}
		return nil
	})
}
