package cli

import (
	"context"

	"github.com/ckpt-dev/ckpt/request"
	"github.com/spf13/cobra"
)

// Commands that record one item: decision, block, unblock, error, accept,
// cycle, note.

// DecisionOptions are the inputs of `ckpt decision`.
type DecisionOptions struct {
	writeOptions
	ID, Text, Reason string
}

func newDecisionCmd(f *factory) *cobra.Command {
	o := &DecisionOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:     "decision ID TEXT",
		Short:   "Record a decision and why it was made",
		Example: `  ckpt decision kai-7/secondary-a "Use the v2 API" --reason "v1 is rate limited"`,
		Args:    exactArgs(2, "a checkpoint ID and the decision's text"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID, o.Text = args[0], args[1]
		return runDecision(ctx, o)
	})
	cmd.Flags().StringVar(&o.Reason, "reason", "", "why the decision was made (`WHY`)")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runDecision(ctx context.Context, o *DecisionOptions) error {
	return o.appendEvent(ctx, o.ID, request.Decision{Text: o.Text, Reason: o.Reason})
}

// BlockOptions are the inputs of `ckpt block`.
type BlockOptions struct {
	writeOptions
	ID, Text  string
	BlockerID string // empty: b1, b2, … in order
}

func newBlockCmd(f *factory) *cobra.Command {
	o := &BlockOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:   "block ID TEXT",
		Short: "Record a blocker (the checkpoint becomes blocked)",
		Long: `Record what blocks checkpoint ID. The checkpoint's status becomes blocked
until every blocker is cleared with ckpt unblock (and no blocking error is
active). Blockers get the IDs b1, b2, … unless --id names one.`,
		Example: `  ckpt block kai-7/secondary-a "Waiting for DISCOVERY.md"
  ckpt block kai-7/secondary-a "API key missing" --id api-key`,
		Args: exactArgs(2, "a checkpoint ID and the blocker's text"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID, o.Text = args[0], args[1]
		return runBlock(ctx, o)
	})
	cmd.Flags().StringVar(&o.BlockerID, "id", "", "the blocker's `ID` (default b1, b2, …)")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runBlock(ctx context.Context, o *BlockOptions) error {
	return o.appendEvent(ctx, o.ID, request.Block{ID: o.BlockerID, Text: o.Text})
}

// UnblockOptions are the inputs of `ckpt unblock`.
type UnblockOptions struct {
	writeOptions
	ID        string
	BlockerID string // empty: every active blocker
}

func newUnblockCmd(f *factory) *cobra.Command {
	o := &UnblockOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:   "unblock ID [BLOCKER-ID]",
		Short: "Clear one blocker, or all of them",
		Long: `Clear blocker BLOCKER-ID of checkpoint ID, or every active blocker when none
is named. A blocked checkpoint returns to in_progress once nothing blocks it.`,
		Example: `  ckpt unblock kai-7/secondary-a b1
  ckpt unblock kai-7/secondary-a`,
		Args: rangeArgs(1, 2, "a checkpoint ID and optionally a blocker ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		if len(args) == 2 {
			o.BlockerID = args[1]
		}
		return runUnblock(ctx, o)
	})
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runUnblock(ctx context.Context, o *UnblockOptions) error {
	return o.appendEvent(ctx, o.ID, request.Unblock{ID: o.BlockerID})
}

// ErrorOptions are the inputs of `ckpt error`.
type ErrorOptions struct {
	writeOptions
	ID, Message, Type string
	Blocking          bool
	Clear             bool
}

func newErrorCmd(f *factory) *cobra.Command {
	o := &ErrorOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:   "error ID [MESSAGE]",
		Short: "Record an error met, or clear the active ones",
		Long: `Record an error checkpoint ID met, with its type. A --blocking error makes
the checkpoint blocked until cleared. --clear (without MESSAGE) clears every
active error.`,
		Example: `  ckpt error kai-7/secondary-a "fetch timed out" --type network
  ckpt error kai-7/secondary-a "disk full" --type io --blocking
  ckpt error kai-7/secondary-a --clear`,
		Args: rangeArgs(1, 2, "a checkpoint ID and the error message (none with --clear)"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		if len(args) == 2 {
			o.Message = args[1]
		}
		return runError(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&o.Type, "type", "", "the error's `TYPE`, e.g. network, test, io")
	fl.BoolVar(&o.Blocking, "blocking", false, "the error stops the work (status becomes blocked)")
	fl.BoolVar(&o.Clear, "clear", false, "clear every active error instead of recording one")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runError(ctx context.Context, o *ErrorOptions) error {
	return o.appendEvent(ctx, o.ID, request.Error{Message: o.Message, Type: o.Type, Blocking: o.Blocking, Clear: o.Clear})
}

// AcceptOptions are the inputs of `ckpt accept`.
type AcceptOptions struct {
	writeOptions
	ID, Criterion, Title string
	Unmet                bool
}

func newAcceptCmd(f *factory) *cobra.Command {
	o := &AcceptOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:   "accept ID CRITERION",
		Short: "Mark an acceptance criterion met (or unmet), adding it if new",
		Example: `  ckpt accept kai-7/secondary-a tests --title "All tests pass"
  ckpt accept kai-7/secondary-a tests --unmet`,
		Args: exactArgs(2, "a checkpoint ID and a criterion ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID, o.Criterion = args[0], args[1]
		return runAccept(ctx, o)
	})
	cmd.Flags().StringVar(&o.Title, "title", "", "the criterion's `TITLE`")
	cmd.Flags().BoolVar(&o.Unmet, "unmet", false, "mark the criterion not met")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runAccept(ctx context.Context, o *AcceptOptions) error {
	return o.appendEvent(ctx, o.ID, request.Accept{ID: o.Criterion, Title: o.Title, Unmet: o.Unmet})
}

// CycleOptions are the inputs of `ckpt cycle`.
type CycleOptions struct {
	writeOptions
	ID, Note string
}

func newCycleCmd(f *factory) *cobra.Command {
	o := &CycleOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:   "cycle ID",
		Short: "Count one more fix/retry cycle (exit 8 past --max-cycles)",
		Long: `Count one more fix or retry cycle of checkpoint ID. When the checkpoint has a
maximum (start/update --max-cycles) and it is reached, nothing is recorded
and ckpt exits with code 8: stop looping and ask for help, or raise the limit.`,
		Example: `  ckpt cycle loop/T060 --note "fix attempt 2: flaky test pinned"`,
		Args:    exactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runCycle(ctx, o)
	})
	cmd.Flags().StringVar(&o.Note, "note", "", "what this cycle is for (`TEXT`)")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runCycle(ctx context.Context, o *CycleOptions) error {
	return o.appendEvent(ctx, o.ID, request.Cycle{Note: o.Note})
}

// NoteOptions are the inputs of `ckpt note`.
type NoteOptions struct {
	writeOptions
	ID, Text string
}

func newNoteCmd(f *factory) *cobra.Command {
	o := &NoteOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:     "note ID TEXT",
		Short:   "Append a line to the checkpoint's context notes",
		Example: `  ckpt note kai-7/secondary-a "spec.md section 5 half written"`,
		Args:    exactArgs(2, "a checkpoint ID and the note's text"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID, o.Text = args[0], args[1]
		return runNote(ctx, o)
	})
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runNote(ctx context.Context, o *NoteOptions) error {
	return o.appendEvent(ctx, o.ID, request.Note{Text: o.Text})
}
