package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/buildinfo"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// VersionOptions are the inputs of `ckpt version`.
type VersionOptions struct {
	IO   cmdutil.IOStreams
	JSON bool
}

func newVersionCmd(f *cmdutil.Factory) *cobra.Command {
	o := &VersionOptions{IO: f.Env.IOStreams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ckpt's version and the commit it was built from",
		Long: `Print the module version of this ckpt binary and, when it was built from a
git checkout, the commit, its time and whether the checkout had changes
(the same as ckpt --version). --json prints the fields.`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
		RunE: f.RunE(func(ctx context.Context, args []string) error { return runVersion(o) }),
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the version fields as JSON")
	return cmd
}

func runVersion(o *VersionOptions) error {
	v := buildinfo.Read()
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, v)
	}
	_, err := fmt.Fprintln(o.IO.Out, v)
	return err
}
