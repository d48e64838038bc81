package cli

import (
	"context"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// StartOptions are the inputs of `ckpt start`: the request (package
// request; Agent.ID and Session are the acting agent's) and the flags'
// text forms it takes the rest from.
type StartOptions struct {
	writeOptions
	ID string
	request.Start

	StepSpecs, AcceptSpecs []string // ID or ID=Title, in order
	MetaPairs, MetaJSON    []string // KEY=VALUE, KEY=JSON
}

func newStartCmd(f *cmdutil.Factory) *cobra.Command {
	o := &StartOptions{writeOptions: newWriter(f)}
	cmd := &cobra.Command{
		Use:   "start ID",
		Short: "Create a checkpoint (its created event)",
		Long: `Create checkpoint ID with its plan: title, task, steps, acceptance criteria,
heartbeat interval, parent, labels and metadata. The acting agent (--agent or
CKPT_AGENT) becomes the checkpoint's agent and CKPT_SESSION its session.
A checkpoint starts in_progress unless --status says otherwise.

Fails with exit 5 if ID exists already.`,
		Example: `  ckpt start kai-7/secondary-a --agent Secondary-A --title "Schedule fetcher spec" \
      --step research --step spec --step checklist --interval 15m
  ckpt start loop/T060 --step PLAN --step EXECUTE --step FIX --max-cycles 3 \
      --accept tests="All tests pass" --parent loop`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runStart(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&o.Title, "title", "", "what the work is, in a few words (`TEXT`)")
	fl.StringVar(&o.TaskID, "task", "", "the task `ID` this work belongs to (tracker issue, plan item)")
	fl.StringVar(&o.Stage, "stage", "", "the current `STAGE`, e.g. S2.P1")
	fl.StringVar(&o.Phase, "phase", "", "the current `PHASE`, in words")
	fl.StringVar(&o.Status, "status", "", "the initial `STATUS` (default in_progress; pending for work not started)")
	stringArrayVar(fl, &o.StepSpecs, "step", "a step of the plan, `ID` or ID=TITLE (repeat, in order)")
	stringArrayVar(fl, &o.AcceptSpecs, "accept", "an acceptance criterion, `ID` or ID=TITLE (repeat)")
	fl.StringVar(&o.Interval, "interval", "", "the heartbeat `DURATION` promised, e.g. 15m (default 15m)")
	fl.StringVar(&o.Parent, "parent", "", "the `ID` of the plan, epic or loop this belongs to")
	stringArrayVar(fl, &o.Labels, "label", "a `LABEL` (repeat)")
	stringArrayVar(fl, &o.MetaPairs, "meta", "free metadata `KEY=VALUE`, stored as a string (repeat)")
	stringArrayVar(fl, &o.MetaJSON, "meta-json", "free metadata `KEY=JSON`, stored as JSON (repeat)")
	fl.IntVar(&o.MaxCycles, "max-cycles", 0, "the most fix/retry cycles allowed (`N`; 0: no limit)")
	fl.StringVar(&o.Agent.Type, "agent-type", "", "the agent's `TYPE`, e.g. primary, secondary, claude-code")
	fl.StringVar(&o.Agent.Name, "agent-name", "", "the agent's human-readable `NAME`")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runStart(ctx context.Context, o *StartOptions) error {
	r := o.Start
	r.Agent.ID, r.Session = o.Actor.Agent, o.Actor.Session
	var err error
	if r.Meta, err = request.ParseMeta(flagName, o.MetaPairs, o.MetaJSON); err != nil {
		return err
	}
	for _, s := range o.StepSpecs {
		id, title, err := request.ParseIDTitle("--step", s)
		if err != nil {
			return err
		}
		r.Steps = append(r.Steps, ckpt.Step{ID: id, Title: title})
	}
	for _, a := range o.AcceptSpecs {
		id, title, err := request.ParseIDTitle("--accept", a)
		if err != nil {
			return err
		}
		r.Accept = append(r.Accept, ckpt.Criterion{ID: id, Title: title})
	}
	return o.appendEvent(ctx, o.ID, r)
}
