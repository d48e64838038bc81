package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// UpdateOptions are the inputs of `ckpt update`: the update (package
// request: a nil pointer leaves its field alone, a set one, even to "",
// sets it) and the flags' text forms it is parsed from.
type UpdateOptions struct {
	writeOptions
	ID string
	request.Update

	ProgressText     *string  // N/M, for work without steps
	MetaPairs        []string // KEY=VALUE; KEY= deletes
	MetaJSONPairs    []string // KEY=JSON; KEY=null deletes
	ReviewScorePairs []string // NAME=SCORE; NAME= records a review not yet given
}

// updateFlags holds the raw flag values before they become UpdateOptions.
type updateFlags struct {
	title, task, stage, phase, currentStep, status, reason, progress, parent string
	lastProcessed, nextToProcess, notes, instructions, interval              string
	lastMessage                                                              string
	assign, agentType, agentName                                             string
	nextSteps                                                                []string
	resumable                                                                bool
	maxCycles                                                                int
}

func newUpdateCmd(f *cmdutil.Factory) *cobra.Command {
	o := &UpdateOptions{writeOptions: newWriter(f)}
	var v updateFlags
	cmd := &cobra.Command{
		Use:   "update ID",
		Short: "Change any field of a checkpoint in one event",
		Long: `Change fields of checkpoint ID, all in one event (one durable write). Only the
flags given change anything; a flag given as "" clears a text field.

Lists: --file-created, --file-modified and --label add (each once);
--unlabel removes; --next-step replaces the whole list of next steps
(--next-step "" empties it). --progress N/M sets progress of a checkpoint
without steps; with steps progress is derived from them and --progress is
refused.

Agent: --assign AGENT replaces the recorded agent, with --agent-type and
--agent-name; the acting agent (--agent) is who makes the change.`,
		Example: `  ckpt update kai-7/secondary-a --stage S2.P2 --current-step "Writing acceptance criteria" \
      --file-modified feature_02/spec.md --next-step "Write checklist.md"
  ckpt update batch/import --progress 120/500 --last-processed row-120 --next-to-process row-121
  ckpt update loop/T060 --status PAUSED --reason "waiting for review" --review-score code=85`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	fl := cmd.Flags()
	fl.StringVar(&v.title, "title", "", "set the title to `TEXT`")
	fl.StringVar(&v.task, "task", "", "set the task `ID`")
	fl.StringVar(&v.stage, "stage", "", "set the `STAGE`, e.g. S2.P2")
	fl.StringVar(&v.phase, "phase", "", "set the `PHASE`")
	fl.StringVar(&v.currentStep, "current-step", "", "set what is being worked on right now (`TEXT`)")
	fl.StringVar(&v.status, "status", "", "set the `STATUS`: pending, in_progress, waiting, blocked, done, failed, abandoned (seed words such as PASSED or PAUSED work too)")
	fl.StringVar(&v.reason, "reason", "", "set the status `REASON` (why it waits, failed or was abandoned)")
	fl.StringVar(&v.progress, "progress", "", "set progress `N/M` of a checkpoint without steps (with steps it is derived from them)")
	fl.StringVar(&v.parent, "parent", "", "set the parent `ID` (\"\" clears it)")
	stringArrayVar(fl, &o.FilesCreated, "file-created", "record a created file `PATH` (repeat)")
	stringArrayVar(fl, &o.FilesModified, "file-modified", "record a modified file `PATH` (repeat)")
	stringArrayVar(fl, &o.AddLabels, "label", "add a `LABEL` (repeat)")
	stringArrayVar(fl, &o.RemoveLabels, "unlabel", "remove a `LABEL` (repeat)")
	fl.StringVar(&v.lastProcessed, "last-processed", "", "set the last `ITEM` processed")
	fl.StringVar(&v.nextToProcess, "next-to-process", "", "set the next `ITEM` to process")
	fl.StringVar(&v.notes, "notes", "", "replace the context notes with `TEXT` (ckpt note appends instead)")
	fl.StringVar(&v.lastMessage, "last-message", "", "set where the agent stopped: its last message (`TEXT`; the hooks set it at each Stop)")
	fl.BoolVar(&v.resumable, "resumable", true, "whether a new session may resume this work (--resumable=false forbids it)")
	fl.StringVar(&v.instructions, "instructions", "", "set the resume instructions for the next session (`TEXT`)")
	stringArrayVar(fl, &v.nextSteps, "next-step", "a next `STEP`; the flags given replace the whole list (repeat; \"\" empties it)")
	fl.StringVar(&v.interval, "interval", "", "set the heartbeat `DURATION`, e.g. 5m")
	fl.IntVar(&v.maxCycles, "max-cycles", 0, "set the most fix/retry cycles allowed (`N`; 0: no limit)")
	stringArrayVar(fl, &o.MetaPairs, "meta", "set metadata `KEY=VALUE` as a string; KEY= deletes the key (repeat)")
	stringArrayVar(fl, &o.MetaJSONPairs, "meta-json", "set metadata `KEY=JSON`; KEY=null deletes the key (repeat)")
	stringArrayVar(fl, &o.ReviewScorePairs, "review-score", "set a review score `NAME=SCORE`, e.g. code=85; NAME= for a review not given yet (repeat)")
	fl.StringVar(&v.assign, "assign", "", "replace the recorded agent with `AGENT` (with --agent-type, --agent-name)")
	fl.StringVar(&v.agentType, "agent-type", "", "the assigned agent's `TYPE` (needs --assign)")
	fl.StringVar(&v.agentName, "agent-name", "", "the assigned agent's `NAME` (needs --assign)")
	addWriteFlags(cmd, &o.writeOptions)

	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		o.Title = changed(fl, "title", v.title)
		o.TaskID = changed(fl, "task", v.task)
		o.Stage = changed(fl, "stage", v.stage)
		o.Phase = changed(fl, "phase", v.phase)
		o.CurrentStep = changed(fl, "current-step", v.currentStep)
		o.Status = changed(fl, "status", v.status)
		o.StatusReason = changed(fl, "reason", v.reason)
		o.ProgressText = changed(fl, "progress", v.progress)
		o.Parent = changed(fl, "parent", v.parent)
		o.LastProcessed = changed(fl, "last-processed", v.lastProcessed)
		o.NextToProcess = changed(fl, "next-to-process", v.nextToProcess)
		o.Notes = changed(fl, "notes", v.notes)
		o.LastMessage = changed(fl, "last-message", v.lastMessage)
		o.Resumable = changed(fl, "resumable", v.resumable)
		o.Instructions = changed(fl, "instructions", v.instructions)
		o.NextSteps = changed(fl, "next-step", v.nextSteps)
		o.Interval = changed(fl, "interval", v.interval)
		o.MaxCycles = changed(fl, "max-cycles", v.maxCycles)
		o.Assign = changed(fl, "assign", v.assign)
		o.AgentType = changed(fl, "agent-type", v.agentType)
		o.AgentName = changed(fl, "agent-name", v.agentName)
		return runUpdate(ctx, o)
	})
	return cmd
}

// changed returns &v when the flag was given, else nil.
func changed[T any](fl *pflag.FlagSet, name string, v T) *T {
	if !fl.Changed(name) {
		return nil
	}
	return &v
}

func runUpdate(ctx context.Context, o *UpdateOptions) error {
	r, err := o.request()
	if err != nil {
		return err
	}
	if _, _, err := r.Build(flagName); errors.Is(err, request.ErrEmpty) {
		return fmt.Errorf("%w: nothing to update: give at least one field, e.g. --stage S2.P2 or --status done (see ckpt update --help)", ckpt.ErrInvalid)
	} else if err != nil {
		return err
	}
	if r.Progress != nil {
		// Progress is derived from steps: a figure given for a checkpoint
		// with steps would be ignored, so it is refused. Only this flag
		// costs the extra read.
		if err := o.refuseDerivedProgress(ctx, r); err != nil {
			return err
		}
	}
	return o.appendEvent(ctx, o.ID, r)
}

// refuseDerivedProgress is the update's CheckProgress, with the hint.
func (o *UpdateOptions) refuseDerivedProgress(ctx context.Context, r request.Update) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	return o.withStore(func(st ckpt.Store) error {
		if err := r.CheckProgress(ctx, st, o.ID); errors.Is(err, ckpt.ErrInvalid) {
			return fmt.Errorf("%w (ckpt step %s STEP --done)", err, o.ID)
		} else if err != nil {
			return err
		}
		return nil
	})
}

// request is the update the options ask for, with the flags' text forms
// (N/M, KEY=VALUE, KEY=JSON, NAME=SCORE) parsed.
func (o *UpdateOptions) request() (request.Update, error) {
	r := o.Update
	if o.ProgressText != nil {
		ps, err := request.ParseProgress("--progress", *o.ProgressText)
		if err != nil {
			return r, err
		}
		r.Progress = &ps
	}
	var err error
	if r.Meta, err = request.ParseMeta(flagName, o.MetaPairs, o.MetaJSONPairs); err != nil {
		return r, err
	}
	r.ReviewScores, err = request.ParseReviewScores("--review-score", o.ReviewScorePairs)
	return r, err
}
