package cli

import (
	"context"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// WhyOptions are the inputs of `ckpt why`.
type WhyOptions struct {
	common
	ID         string
	JSON       bool
	Thresholds ckpt.Thresholds
}

func newWhyCmd(f *cmdutil.Factory) *cobra.Command {
	o := &WhyOptions{common: newCommon(f)}
	var th thresholdFlags
	cmd := &cobra.Command{
		Use:   "why ID",
		Short: "Explain a checkpoint's presence: the rule, the signal, when, which process",
		Long: `Explain the presence every view shows for checkpoint ID (working, busy,
waiting, blocked, failed, dead, stale, warn, ended, done or -): the rule
that decided it (docs/design.md, "Liveness and presence"), the signal it
came from, since when, the last reported state with its session, the
client process bound to the session (host, PID, start time) and whether it
is alive, and what would change the state. --json prints the same as an
object (as GET /v1/why/{id} and the MCP tool ckpt_why do).`,
		Example: `  ckpt why kai-7/secondary-a
  ckpt why kai-7/secondary-a --json`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		t, err := th.parse()
		if err != nil {
			return err
		}
		o.ID, o.Thresholds = args[0], t
		return runWhy(ctx, o)
	})
	th.add(cmd)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the explanation as JSON")
	return cmd
}

func runWhy(ctx context.Context, o *WhyOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	return o.withStore(func(st ckpt.Store) error {
		c, err := st.Get(ctx, o.ID, 0)
		if err != nil {
			return err
		}
		s := c.Summary()
		w := render.NewWhy(&s, o.Now(), o.Thresholds, process.Alive)
		if w.Presence.State == ckpt.PresenceDead { // confirm on a fresh read (ckpt.RejudgeDead)
			if c, err = st.Get(ctx, o.ID, 0); err != nil {
				return err
			}
			s = c.Summary()
			w = render.NewWhy(&s, o.Now(), o.Thresholds, process.Alive)
		}
		if o.JSON {
			return cmdutil.WriteJSON(o.IO.Out, w)
		}
		return render.WhyText(o.IO.Out, w)
	})
}
