package cli

import (
	"context"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/spf13/cobra"
)

// ProgressOptions are the inputs of `ckpt progress`.
type ProgressOptions struct {
	common
	ID      string
	Rev     int64
	OutFile string // write to this file atomically; "" for stdout
}

func newProgressCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ProgressOptions{common: newCommon(f)}
	var out string
	cmd := &cobra.Command{
		Use:   "progress ID",
		Short: "Render a checkpoint as seed 001's progress file (Markdown)",
		Long: `Render checkpoint ID as seed 001's .ccc-progress.md: the issue, session and
execution mode, then the sections Completed Tasks, Current Task, Remaining
Tasks, Decisions Made, Blockers and Continuation Prompt. A done checkpoint
with unmet acceptance criteria lists them as remaining tasks.

--out FILE writes it to FILE atomically instead of stdout. The same
checkpoint as data is ckpt show ID --json; the full continuation prompt is
ckpt resume ID.`,
		Example: `  ckpt progress loop/T060
  ckpt progress loop/T060 --out .ccc-progress.md`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		o.OutFile = absPath(f.Env.WorkDir, out)
		return runProgress(ctx, o)
	})
	cmd.Flags().Int64Var(&o.Rev, "rev", 0, "render the checkpoint as it was after revision `N`")
	cmd.Flags().StringVar(&out, "out", "", "write the Markdown to `FILE` atomically instead of stdout")
	return cmd
}

func runProgress(ctx context.Context, o *ProgressOptions) error {
	if err := checkIDRev(o.ID, o.Rev); err != nil {
		return err
	}
	return o.withStore(func(st ckpt.Store) error {
		c, err := st.Get(ctx, o.ID, o.Rev)
		if err != nil {
			return err
		}
		// The one rendering of .ccc-progress.md, written as ckpt export ccc
		// writes it: the same as ckpt checkpoint and a ccc mirror write.
		md, err := mirror.Export(ccc.Name, c, o.OutFile)
		if err != nil || o.OutFile != "" {
			return err
		}
		return writeString(o.IO.Out, render.Terminal(string(md)))
	})
}
