package cli

import (
	"context"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// InboxOptions are the inputs of `ckpt inbox`.
type InboxOptions struct {
	common
	Thresholds ckpt.Thresholds
	Prefix     string
	Parent     string
	JSON       bool
}

func newInboxCmd(f *cmdutil.Factory) *cobra.Command {
	o := &InboxOptions{common: newCommon(f)}
	var th thresholdFlags
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "What needs a person, most urgent first: waiting, blocked, dead, stale, failed",
		Long: `List the checkpoints that need a person, most urgent first: agents waiting
for an answer (a permission prompt, a finished turn, ckpt wait), blocked work,
agents dead or silent past the stale threshold, failed work; the oldest first
within each. Each row says why and since when. Answer an agent with
ckpt tell ID MESSAGE; take over a dead one with ckpt takeover.

--json prints {"items": [...], "counts": {...}}; each item has id, title,
agent, status, state, reason, since, age_seconds and messages (told, not yet
delivered). Over a server store, only what the token may see.`,
		Example: `  ckpt inbox
  ckpt inbox --prefix kai-7/ --json
  ckpt tell kai-7/secondary-a "Approved: go ahead"`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		t, err := th.parse()
		if err != nil {
			return err
		}
		o.Thresholds = t
		return runInbox(ctx, o)
	})
	th.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`, e.g. kai-7/")
	fl.StringVar(&o.Parent, "parent", "", "only checkpoints with this parent `ID`")
	fl.BoolVar(&o.JSON, "json", false, "print the inbox as JSON")
	return cmd
}

func runInbox(ctx context.Context, o *InboxOptions) error {
	var in ckpt.Inbox
	err := o.withStore(func(st ckpt.Store) error {
		var err error
		in, err = ckpt.InboxFrom(ctx, st, ckpt.Filter{Prefix: o.Prefix, Parent: o.Parent}, o.Now(), o.Thresholds, process.Alive)
		return err
	})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, in)
	}
	return render.WriteInbox(o.IO.Out, in)
}
