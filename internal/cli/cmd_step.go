package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// StepOptions are the inputs of `ckpt step`: the change to one step of
// checkpoint ID (package request; its Actor is the acting agent's).
type StepOptions struct {
	writeOptions
	ID     string
	Change request.Step
}

// stepStatusFlags are the flags that set a step's status, one at a time.
var stepStatusFlags = []struct {
	flag   string
	status ckpt.StepStatus
	usage  string
}{
	{"start", ckpt.StepInProgress, "mark the step in_progress (it becomes the current step)"},
	{"done", ckpt.StepDone, "mark the step done"},
	{"fail", ckpt.StepFailed, "mark the step failed"},
	{"skip", ckpt.StepSkipped, "mark the step skipped (counts as finished)"},
	{"pending", ckpt.StepPending, "put the step back to pending"},
}

func newStepCmd(f *cmdutil.Factory) *cobra.Command {
	o := &StepOptions{writeOptions: newWriter(f)}
	marks := make([]bool, len(stepStatusFlags))
	cmd := &cobra.Command{
		Use:   "step ID STEP",
		Short: "Start, finish, fail or skip a step, or add one",
		Long: `Change step STEP of checkpoint ID: its status (at most one of --start, --done,
--fail, --skip, --pending) and its title, phase, output, notes and who did it.

A STEP the checkpoint does not have is refused (a typo must not add a step
and count it done), naming the closest step. --add adds it at the end of the
plan instead: "ckpt step ID STEP --add --title T" adds a pending step.

Finishing the current step (--done, --skip) makes the next unfinished step
current, or clears the current step when every step is finished.

--by defaults to the acting agent when the status changes.`,
		Example: `  ckpt step kai-7/secondary-a research --start
  ckpt step kai-7/secondary-a research --done --output research/NOTES.md
  ckpt step loop/T060 FIX --fail --notes "tests still red" --by subagent:fixer
  ckpt step kai-7/secondary-a review --add --title "Peer review"`,
		Args: cmdutil.ExactArgs(2, "a checkpoint ID and a step ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID, o.Change.Step = args[0], args[1]
		var given []string
		for i, m := range marks {
			if m {
				given = append(given, "--"+stepStatusFlags[i].flag)
				o.Change.Status = stepStatusFlags[i].status
			}
		}
		if len(given) > 1 {
			return cmdutil.Usagef("give at most one of --start, --done, --fail, --skip, --pending (got %s)", strings.Join(given, ", "))
		}
		return runStep(ctx, o)
	})
	fl := cmd.Flags()
	for i, s := range stepStatusFlags {
		fl.BoolVar(&marks[i], s.flag, false, s.usage)
	}
	fl.StringVar(&o.Change.Title, "title", "", "the step's `TITLE`")
	fl.StringVar(&o.Change.Phase, "phase", "", "the `PHASE` the step belongs to")
	fl.StringVar(&o.Change.By, "by", "", "who did it: `WHO` such as main, subagent:TYPE or an agent ID (default: the acting agent)")
	fl.StringVar(&o.Change.Output, "output", "", "what the step produced, e.g. a file `PATH`")
	fl.StringVar(&o.Change.Notes, "notes", "", "`NOTES` on the step")
	stringArrayVar(fl, &o.Change.After, "after", "the step waits for step `ID` to finish (repeat; adds to its dependencies)")
	fl.BoolVar(&o.Change.Add, "add", false, "add STEP at the end of the plan if the checkpoint does not have it")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runStep(ctx context.Context, o *StepOptions) error {
	r := o.Change
	r.Actor = o.Actor.Agent
	err := o.appendEvent(ctx, o.ID, r)
	var nf *ckpt.StepNotFoundError
	if errors.As(err, &nf) {
		return fmt.Errorf("%w (to add it as a new step: ckpt step %s --add)", err, render.ShellArgs([]string{o.ID, o.Change.Step}))
	}
	return err
}
