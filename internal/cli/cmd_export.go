package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
)

// ExportOptions are the inputs of `ckpt export`.
type ExportOptions struct {
	common
	WorkDir string
	Format  string
	ID      string
	Rev     int64  // 0: the latest
	Out     string // "": standard output
}

func newExportCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ExportOptions{common: newCommon(f), WorkDir: f.Env.WorkDir}
	cmd := &cobra.Command{
		Use:   "export FORMAT ID",
		Short: "Write a checkpoint as a seed-protocol file",
		Long: `Render checkpoint ID as FORMAT's file: metadata.json (superpowers),
.ccc-progress.md (ccc), agent_checkpoints/<agent>.json (agent-checkpoints),
progress/checkpoints/<agent>-<task>.json (sitebuilder) or plan.md (plan).
A checkpoint imported from such a file gets back every field of it, unknown
ones included. The file goes to standard output, or with --out to PATH,
written atomically and durably (temporary file, fsync, rename; missing
directories are created).

Formats: ` + strings.Join(mirror.Formats, ", ") + ` (see docs/formats.md).`,
		Example: `  ckpt export superpowers configurable-models_20260706
  ckpt export agent-checkpoints kai-7/secondary_a --out agent_checkpoints/secondary_a.json`,
		Args: cmdutil.ExactArgs(2, "a FORMAT and one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Format, o.ID = args[0], args[1]
		return runExport(ctx, o)
	})
	cmd.Flags().StringVar(&o.Out, "out", "", "write the file to `PATH` atomically instead of standard output")
	cmd.Flags().Int64Var(&o.Rev, "rev", 0, "export the checkpoint as it was at revision `N`")
	return cmd
}

func runExport(ctx context.Context, o *ExportOptions) error {
	if _, err := mirror.NewFormat(o.Format); err != nil {
		return err
	}
	if err := checkIDRev(o.ID, o.Rev); err != nil {
		return err
	}
	var c *ckpt.Checkpoint
	if err := o.withStore(func(st ckpt.Store) error {
		var err error
		c, err = st.Get(ctx, o.ID, o.Rev)
		return err
	}); err != nil {
		return err
	}
	data, err := mirror.Export(o.Format, c, absPath(o.WorkDir, o.Out))
	if err != nil {
		return err
	}
	if o.Out == "" {
		_, err = o.IO.Out.Write(data)
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, "exported %s (rev %d) as %s to %s\n", o.ID, c.Rev, o.Format, o.Out)
	return err
}
