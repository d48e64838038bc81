package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/spf13/cobra"
)

// ArchiveOptions are the inputs of `ckpt archive`.
type ArchiveOptions struct {
	writeOptions
	ID     string
	Reason string // default complete
	Force  bool   // archive work that has not ended
}

func newArchiveCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ArchiveOptions{writeOptions: newWriter(f)}
	cmd := &cobra.Command{
		Use:   "archive ID",
		Short: "Archive finished work: hidden from ls, status and stale",
		Long: `Archive checkpoint ID (seed 003's -complete archive): an archived event
records why and when. Archived checkpoints are kept, with their history, but
left out of ls, status, stale and monitor unless --all is given; ckpt prune
deletes them once they are old enough.

Work that has not ended (not done, failed or abandoned) is refused unless
--force: archiving it would hide live work. Archiving an archived checkpoint
again does nothing.`,
		Example: `  ckpt archive migration-T060
  ckpt archive kai-7/secondary-a --reason superseded --force`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runArchive(ctx, o)
	})
	cmd.Flags().StringVar(&o.Reason, "reason", "complete", "why, in a `WORD` or a few")
	cmd.Flags().BoolVar(&o.Force, "force", false, "archive even work that has not ended")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runArchive(ctx context.Context, o *ArchiveOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if strings.TrimSpace(o.Reason) == "" {
		return fmt.Errorf("%w: --reason is empty: say why, e.g. --reason complete", ckpt.ErrInvalid)
	}
	if o.IfRev < 0 {
		return fmt.Errorf("%w: --if-rev %d: give a revision of 1 or more (see ckpt show %s)", ckpt.ErrInvalid, o.IfRev, o.ID)
	}
	return o.withStore(func(st ckpt.Store) error {
		l := ckpt.Lifecycle{At: o.Now(), Actor: o.eventActor(), Key: o.Key, Force: o.Force, IfRev: o.IfRev}
		r, already, err := ckpt.ArchiveCheckpoint(ctx, st, o.ID, o.Reason, l)
		if err != nil {
			return err
		}
		c := r.State
		switch {
		case already:
			cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s was archived already (%s at %s): nothing appended",
				o.ID, c.Archived.Reason, c.Archived.At.Format(render.TimeLayout)))
		case r.Replayed:
			cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("key %q was applied already as revision %d: nothing appended", o.Key, r.Event.Seq))
		}
		if o.JSON {
			return cmdutil.WriteJSON(o.IO.Out, c)
		}
		if already {
			_, err = io.WriteString(o.IO.Out, render.Terminal(fmt.Sprintf("%s  rev %d  archived (%s)\n", c.ID, c.Rev, c.Archived.Reason)))
			return err
		}
		_, err = fmt.Fprintln(o.IO.Out, render.SummaryLine(c, r.Event))
		return err
	})
}
