package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/protocols/plan"
)

// PlanOptions are the inputs of the `ckpt plan` commands.
type PlanOptions struct {
	writeOptions
	WorkDir  string
	Path     string // plan.md (sync: the argument; check/uncheck: --plan)
	ID       string // the checkpoint; default: the one the plan's place suggests
	By       string // who completed newly checked tasks: main, subagent:TYPE, team:ID
	Notes    string // --notes: state.json's sessionNotes
	Recovery string // --recovery REASON: write recovery.json now
	TaskID   string // check/uncheck
	Done     bool   // check (true) or uncheck
}

func newPlanCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Keep a checkpoint in step with a plan.md (seed 004)",
		Long: `plan.md is the source of truth (seed 004): its <!-- CHECKPOINT: phase -->,
<!-- TASK: id -->, <!-- ACCEPT: id -->, <!-- DECISION: … --> and
<!-- BLOCKER: … --> markers say what the work is and how far it got.
ckpt plan sync reads it with a real Markdown parser (markers in code are not
markers, [X] is checked), writes .checkpoint/state.json (version 2),
history.jsonl and recovery.json beside it, and stores the result in the
checkpoint. ckpt plan check and uncheck tick a box in plan.md itself, then
sync. See docs/plan.md.`,
	}
	cmd.AddCommand(newPlanSyncCmd(f), newPlanTickCmd(f, true), newPlanTickCmd(f, false))
	return cmd
}

func addPlanSyncFlags(cmd *cobra.Command, o *PlanOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.ID, "id", "", "the checkpoint `ID` (default: the plan's directory name, plans/<id>/plan.md)")
	fl.StringVar(&o.By, "by", "main", "who completed the newly checked tasks: main, subagent:`TYPE` or team:ID")
	fl.StringVar(&o.Notes, "notes", "", "set state.json's session notes to `TEXT`")
	fl.StringVar(&o.Recovery, "recovery", "", "write recovery.json now, with `REASON` (e.g. pre_subagent_spawn)")
	fl.BoolVar(&o.JSON, "json", false, "print what the sync did as JSON")
}

func newPlanSyncCmd(f *cmdutil.Factory) *cobra.Command {
	o := &PlanOptions{writeOptions: newWriter(f), WorkDir: f.Env.WorkDir}
	cmd := &cobra.Command{
		Use:   "sync PATH",
		Short: "Read plan.md and store what it says in its checkpoint",
		Long: `Make a checkpoint of the plan at PATH as seed 004 does: parse plan.md, derive
the version-2 state, append what changed to .checkpoint/history.jsonl
(task_completed, phase_completed, …), write .checkpoint/state.json, and
recovery.json on the first checkpoint, every 5th, when a phase completes and
after a recovery. Then store the plan's phases, tasks (as steps), acceptance,
decisions, blockers and progress in the checkpoint: a synced event (an
imported one when the checkpoint is new); nothing is stored when nothing
changed.

The document's error chain is followed and each case is logged in
history.jsonl: a changed checksum re-parses plan.md; a plan.md that cannot be
parsed keeps the last known state (a warning; nothing stored); a corrupt
state.json is restored from recovery.json; with both corrupt the state is
rebuilt from plan.md.`,
		Example: `  ckpt plan sync plans/260220-1149-feature/plan.md
  ckpt plan sync plans/260220-1149-feature/plan.md --by subagent:fullstack`,
		Args: cmdutil.ExactArgs(1, "one PATH to a plan.md"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.Path = args[0]
		return runPlanSync(ctx, o)
	})
	addPlanSyncFlags(cmd, o)
	return cmd
}

func newPlanTickCmd(f *cmdutil.Factory, done bool) *cobra.Command {
	o := &PlanOptions{writeOptions: newWriter(f), WorkDir: f.Env.WorkDir, Done: done}
	use, short, long := "check", "Tick a task's box in plan.md, then sync", `Tick the box of the task (or acceptance criterion) marked <!-- TASK: TASK-ID -->
in plan.md itself, changing only that one character, then run ckpt plan sync.`
	if !done {
		use, short, long = "uncheck", "Untick a task's box in plan.md, then sync", `Untick the box of the task (or acceptance criterion) marked <!-- TASK: TASK-ID -->
in plan.md itself, changing only that one character, then run ckpt plan sync.`
	}
	cmd := &cobra.Command{
		Use:   use + " TASK-ID",
		Short: short,
		Long: long + `

The plan is --plan PATH, else the plan the checkpoint --id was synced from,
else plan.md in the working directory, else the one plans/*/plan.md below it.
Exit 3 when no marker carries TASK-ID.`,
		Example: "  ckpt plan " + use + " db-schema --plan plans/260220-1149-feature/plan.md",
		Args:    cmdutil.ExactArgs(1, "one TASK-ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.TaskID = args[0]
		return runPlanTick(ctx, o)
	})
	cmd.Flags().StringVar(&o.Path, "plan", "", "the plan.md `PATH`")
	addPlanSyncFlags(cmd, o)
	return cmd
}

func runPlanSync(ctx context.Context, o *PlanOptions) error {
	if err := o.check(); err != nil {
		return err
	}
	return o.sync(ctx)
}

// check checks --by and --id.
func (o *PlanOptions) check() error {
	if err := plan.CheckBy("--by", o.By); err != nil {
		return err
	}
	if o.ID != "" {
		if err := ckpt.ValidateID(o.ID); err != nil {
			return fmt.Errorf("--id: %w", err)
		}
	}
	return nil
}

// sync syncs o.Path and stores it (plan.SyncStore), then prints what the
// sync did.
func (o *PlanOptions) sync(ctx context.Context) error {
	var rep plan.Report
	err := o.withStore(func(st ckpt.Store) error {
		var err error
		rep, err = plan.SyncStore(ctx, st, plan.SyncStoreOptions{
			Plan: o.Path, Path: absPath(o.WorkDir, o.Path), ID: o.ID, By: o.By, Notes: o.Notes, Recovery: o.Recovery,
			Now: o.Now(), Actor: o.eventActor(), Key: o.Key, IfRev: o.IfRev,
		})
		for _, w := range rep.Warnings {
			cmdutil.PrintWarning(o.IO.ErrOut, o.Path+": "+w)
		}
		for _, w := range rep.StoreWarnings {
			cmdutil.PrintWarning(o.IO.ErrOut, w)
		}
		return err
	})
	if err != nil {
		return err
	}
	if rep.PlanError != "" {
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s could not be read (%s): the last known state was kept and nothing was stored; fix plan.md and sync again", o.Path, rep.PlanError))
	}
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, rep)
	}
	return writeString(o.IO.Out, rep.Text())
}

func runPlanTick(ctx context.Context, o *PlanOptions) error {
	if o.TaskID == "" {
		return cmdutil.Usagef("give the TASK-ID whose box to %s", map[bool]string{true: "tick", false: "untick"}[o.Done])
	}
	if err := o.check(); err != nil {
		return err // before the box is ticked: a refused sync must not leave plan.md changed
	}
	path, err := o.findPlan(ctx)
	if err != nil {
		return err
	}
	o.Path = path
	if err := plan.SetTask(absPath(o.WorkDir, path), o.TaskID, o.Done); err != nil {
		if errors.Is(err, plan.ErrUnknownTask) {
			return unknownTaskError{err}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %v: give the plan with --plan PATH", ckpt.ErrNotFound, err)
		}
		return err
	}
	verb := "checked"
	if !o.Done {
		verb = "unchecked"
	}
	if !o.JSON {
		fmt.Fprintf(o.IO.Out, "%s %s in %s\n", verb, o.TaskID, path)
	}
	return o.sync(ctx)
}

// unknownTaskError is SetTask's refusal of an ID no marker carries (exit 3).
type unknownTaskError struct{ err error }

func (e unknownTaskError) Error() string {
	return e.err.Error() + ": give one of those IDs (or add the marker to plan.md)"
}
func (e unknownTaskError) Unwrap() []error { return []error{ckpt.ErrNotFound, e.err} }

// findPlan returns the plan.md check and uncheck edit: --plan, else the
// one plan.Find finds.
func (o *PlanOptions) findPlan(ctx context.Context) (string, error) {
	if o.Path != "" {
		return o.Path, nil
	}
	var path string
	err := o.withStore(func(st ckpt.Store) error {
		var err error
		path, err = plan.Find(ctx, st, o.WorkDir, o.ID)
		return err
	})
	if errors.Is(err, ckpt.ErrInvalid) {
		return "", fmt.Errorf("%w: give it with --plan PATH", err)
	}
	return path, err
}
