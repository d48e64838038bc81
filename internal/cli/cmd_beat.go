package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// BeatOptions are the inputs of `ckpt beat`.
type BeatOptions struct {
	common
	ID   string
	JSON bool
	// State, Reason and PID are the presence signal the beat carries (see
	// docs/design.md, "Liveness and presence"); zero values carry none.
	State  ckpt.PresenceState
	Reason string
	For    string // what waiting waits on: person or thing
	PID    int
	// Session is the acting session (CKPT_SESSION): a late state from a
	// session that ended does not replace ended.
	Session string
}

func newBeatCmd(f *cmdutil.Factory) *cobra.Command {
	o := &BeatOptions{common: newCommon(f)}
	cmd := &cobra.Command{
		Use:   "beat ID",
		Short: "Record a heartbeat: a sign of life, not history",
		Long: `Record that the agent working on checkpoint ID is alive. A heartbeat does not
grow the history and costs no fsync: it is not an event, so it takes no
--if-rev or --key (repeating it is harmless). ckpt ls and show report the
last sign of life (the later of the last beat and the last update).

--state reports what the agent is doing, for scripts and clients without
hooks: working, busy (in a long tool), waiting (for a person, or with
--for thing for a build, a review bot, a lock) or ended (the session closed
cleanly: never stale). --reason says why (the tool, the question). --pid records the agent's process on this host, so that views
report it dead as soon as it is gone. ckpt status, stale and show derive the
presence they print from these.`,
		Example: `  ckpt beat kai-7/secondary-a
  ckpt beat kai-7/secondary-a --state busy --reason "make test"
  ckpt beat kai-7/secondary-a --state waiting --reason "approve the schema change" --pid $$
  ckpt beat kai-7/secondary-a --state waiting --for thing --reason "CI run 8812"`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.ID, o.Session = args[0], f.Env.Var(cmdutil.EnvSession)
		return runBeat(ctx, o)
	})
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the checkpoint as JSON after the beat")
	cmd.Flags().Var((*presenceFlag)(&o.State), "state", "the agent's `STATE`: working, busy, waiting or ended")
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why, with --state: the `TEXT` of the tool or question")
	cmd.Flags().StringVar(&o.For, "for", "", "with --state waiting: what it waits on, `person` (the default) or thing")
	cmd.Flags().IntVar(&o.PID, "pid", 0, "the agent's process `PID` on this host, recorded with its start time")
	return cmd
}

func runBeat(ctx context.Context, o *BeatOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	sig, err := o.signal()
	if err != nil {
		return err
	}
	return o.withStore(func(st ckpt.Store) error {
		if err := st.Beat(ctx, o.ID, sig); err != nil {
			return err
		}
		if o.JSON {
			c, err := st.Get(ctx, o.ID, 0)
			if err != nil {
				return err
			}
			return cmdutil.WriteJSON(o.IO.Out, c)
		}
		_, err := fmt.Fprintln(o.IO.Out, render.BeatLine(o.ID, sig))
		return err
	})
}
