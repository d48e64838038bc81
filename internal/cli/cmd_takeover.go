package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// Commands that hand work on, start it over, archive it or move it back:
// takeover, restart, archive, restore. None of them rewrites history: each
// appends events, and takeover and restart first store the old state as a
// new, archived checkpoint.

// HandOverOptions are the inputs of `ckpt takeover` and `ckpt restart`:
// both archive the old state first and print the continuation prompt.
type HandOverOptions struct {
	common
	// nextSession's Actor performs it (an orchestrator, or the new agent).
	nextSession
	// Restart starts the work over (restart); else it goes to To
	// (takeover), whose ID or Name is required.
	Restart bool
	To      ckpt.Agent
	Reason  string // recorded in the archive name; default crashed (takeover), aborted (restart)
	Force   bool   // hand over or restart even done (takeover: or not-resumable) work
	Key     string
	JSON    bool
}

// handOverCmd is the RunE of takeover and restart, and their shared flags.
func handOverCmd(f *factory, cmd *cobra.Command, o *HandOverOptions, reason, force, key string) {
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.fill(f, args)
		return runHandOver(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&o.Reason, "reason", o.Reason, reason)
	fl.BoolVar(&o.Force, "force", false, force)
	fl.StringVar(&o.Key, "key", "", key)
	fl.BoolVar(&o.JSON, "json", false, "print the archive name and continuation prompt as JSON")
}

func newTakeoverCmd(f *factory) *cobra.Command {
	o := &HandOverOptions{common: f.common(), Reason: "crashed"}
	cmd := &cobra.Command{
		Use:   "takeover ID --agent NEW",
		Short: "Hand a checkpoint to a new agent; archive the old agent's state",
		Long: `Hand checkpoint ID to agent NEW, for when its agent crashed or was replaced
(seed 002's takeover). The old agent's state is first stored as a new,
archived checkpoint named ID_<reason>_<unix time> (ID_crashed_1768487400 by
default); then a taken_over event gives the work to NEW in a new session. The
history of ID keeps everything. It prints the archive's name and the
continuation prompt NEW needs (--json: as data, with archived_as).

Here --agent names the new agent and is required; the acting agent recorded
on the events is $CKPT_AGENT. The new session's ID is $CKPT_SESSION when set.
A done or not-resumable checkpoint is refused with exit code 9 unless --force;
an archived one always is (take over the live checkpoint instead).`,
		Example: `  ckpt takeover kai-7/secondary-a --agent Secondary-C
  ckpt takeover kai-7/secondary-a --agent Secondary-C --reason reassigned --json`,
		Args: exactArgs(1, "one checkpoint ID"),
	}
	handOverCmd(f, cmd, o, "why, one `WORD` recorded in the archive name (crashed, reassigned, …)",
		"take over even a done or not-resumable checkpoint",
		"idempotency `KEY`: a retried takeover with this key hands over and archives nothing more")
	fl := cmd.Flags()
	fl.StringVar(&o.To.ID, "agent", "", "the new agent's `ID` (required; here not the acting agent)")
	fl.StringVar(&o.To.Type, "agent-type", "", "the new agent's `TYPE`, e.g. secondary")
	fl.StringVar(&o.To.Name, "agent-name", "", "the new agent's human-readable `NAME`")
	return cmd
}

func newRestartCmd(f *factory) *cobra.Command {
	o := &HandOverOptions{common: f.common(), Restart: true, Reason: "aborted"}
	cmd := &cobra.Command{
		Use:   "restart ID",
		Short: "Start a checkpoint's work over; archive the old state as aborted",
		Long: `Start the work of checkpoint ID from scratch (seed 002's last resort). The old
state is first stored as a new, archived checkpoint named
ID_<reason>_<unix time> (ID_aborted_1768487400 by default); then a restarted
event puts every step back to pending and clears progress, decisions,
blockers, errors, files and context, in a new session. The plan (steps,
acceptance criteria) and the history stay. It prints the archive's name and
the fresh continuation prompt (--json: as data).

Done work is refused with exit code 9 unless --force (restarting it throws
finished work away); an archive always is. Work marked not resumable may be
restarted: that is what restart is for.`,
		Example: `  ckpt restart kai-7/secondary-a
  ckpt restart kai-7/secondary-a --reason corrupted`,
		Args: exactArgs(1, "one checkpoint ID"),
	}
	handOverCmd(f, cmd, o, "why, one `WORD` recorded in the archive name", "restart even done work",
		"idempotency `KEY`: a retried restart with this key resets and archives nothing more")
	return cmd
}

// runHandOver archives the old state and takes over or restarts
// (ckpt.TakeOverCheckpoint, ckpt.RestartCheckpoint), then prints the
// continuation; a takeover's says what changed in the code since.
func runHandOver(ctx context.Context, o *HandOverOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	fallback := "aborted"
	if !o.Restart {
		fallback = "crashed"
		if strings.TrimSpace(o.To.ID) == "" && strings.TrimSpace(o.To.Name) == "" {
			return fmt.Errorf("%w: a takeover needs the new agent: pass --agent NAME (the agent that continues the work)", ckpt.ErrInvalid)
		}
	}
	reason, err := archiveReason(o.Reason, fallback)
	if err != nil {
		return err
	}
	return o.withStore(func(st ckpt.Store) error {
		l := ckpt.Lifecycle{At: o.Now(), Actor: o.Actor, SessionID: o.SessionID, Reason: reason, Key: o.Key, Force: o.Force}
		if o.Restart {
			c, name, err := ckpt.RestartCheckpoint(ctx, st, o.ID, l)
			if err != nil {
				return err
			}
			return writeContinuation(o.IO, render.NewContinuation(c, name), o.JSON)
		}
		c, name, err := ckpt.TakeOverCheckpoint(ctx, st, o.ID, o.To, l)
		if err != nil {
			return err
		}
		return writeContinuation(o.IO, withCodeSince(ctx, render.NewContinuation(c, name), o.WorkDir), o.JSON)
	})
}

// archiveReason checks a reason that becomes part of an archive's ID.
func archiveReason(reason, fallback string) (string, error) {
	r := strings.TrimSpace(reason)
	if r == "" {
		r = fallback
	}
	if ckpt.ValidateArchiveReason(r) != nil {
		return "", fmt.Errorf("%w: --reason %q becomes part of the archive's ID: use one word of letters, digits, '.', '_' or '-', at most %d bytes, e.g. %s",
			ckpt.ErrInvalid, reason, ckpt.MaxReasonLen, fallback)
	}
	return r, nil
}

// ArchiveOptions are the inputs of `ckpt archive`.
type ArchiveOptions struct {
	writeOptions
	ID     string
	Reason string // default complete
	Force  bool   // archive work that has not ended
}

func newArchiveCmd(f *factory) *cobra.Command {
	o := &ArchiveOptions{writeOptions: f.writer()}
	cmd := &cobra.Command{
		Use:   "archive ID",
		Short: "Archive finished work: hidden from ls, status and stale",
		Long: `Archive checkpoint ID (seed 003's -complete archive): an archived event
records why and when. Archived checkpoints are kept, with their history, but
left out of ls, status, stale and monitor unless --all is given; ckpt prune
deletes them once they are old enough.

Work that has not ended (not done, failed or abandoned) is refused unless
--force: archiving it would hide live work. Archiving an archived checkpoint
again does nothing.`,
		Example: `  ckpt archive migration-T060
  ckpt archive kai-7/secondary-a --reason superseded --force`,
		Args: exactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runArchive(ctx, o)
	})
	cmd.Flags().StringVar(&o.Reason, "reason", "complete", "why, in a `WORD` or a few")
	cmd.Flags().BoolVar(&o.Force, "force", false, "archive even work that has not ended")
	addWriteFlags(cmd, &o.writeOptions)
	return cmd
}

func runArchive(ctx context.Context, o *ArchiveOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if strings.TrimSpace(o.Reason) == "" {
		return fmt.Errorf("%w: --reason is empty: say why, e.g. --reason complete", ckpt.ErrInvalid)
	}
	if o.IfRev < 0 {
		return fmt.Errorf("%w: --if-rev %d: give a revision of 1 or more (see ckpt show %s)", ckpt.ErrInvalid, o.IfRev, o.ID)
	}
	return o.withStore(func(st ckpt.Store) error {
		l := ckpt.Lifecycle{At: o.Now(), Actor: o.Actor, Key: o.Key, Force: o.Force, IfRev: o.IfRev}
		r, already, err := ckpt.ArchiveCheckpoint(ctx, st, o.ID, o.Reason, l)
		if err != nil {
			return err
		}
		c := r.State
		switch {
		case already:
			printWarning(o.IO.ErrOut, fmt.Sprintf("%s was archived already (%s at %s): nothing appended",
				o.ID, c.Archived.Reason, c.Archived.At.Format(render.TimeLayout)))
		case r.Replayed:
			printWarning(o.IO.ErrOut, fmt.Sprintf("key %q was applied already as revision %d: nothing appended", o.Key, r.Event.Seq))
		}
		if o.JSON {
			return writeJSON(o.IO.Out, c)
		}
		if already {
			_, err = io.WriteString(o.IO.Out, render.Terminal(fmt.Sprintf("%s  rev %d  archived (%s)\n", c.ID, c.Rev, c.Archived.Reason)))
			return err
		}
		_, err = fmt.Fprintln(o.IO.Out, render.SummaryLine(c, r.Event))
		return err
	})
}

// RestoreOptions are the inputs of `ckpt restore`.
type RestoreOptions struct {
	common
	ID    string
	Rev   int64
	Actor ckpt.Actor
	Key   string
	Force bool // restore even an archive
	JSON  bool
}

func newRestoreCmd(f *factory) *cobra.Command {
	o := &RestoreOptions{common: f.common()}
	cmd := &cobra.Command{
		Use:   "restore ID --rev N",
		Short: "Bring a checkpoint back to the state it had at revision N",
		Long: `Bring checkpoint ID back to the state it had right after revision N by
appending a restored event: the history keeps every event, including those
after N, and a later restore can move forward again. ckpt log ID lists the
revisions; ckpt show ID --rev N shows one before restoring it.`,
		Example: `  ckpt log kai-7/secondary-a
  ckpt restore kai-7/secondary-a --rev 12`,
		Args: exactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		o.Actor = f.actor()
		return runRestore(ctx, o)
	})
	fl := cmd.Flags()
	fl.Int64Var(&o.Rev, "rev", 0, "the revision `N` to go back to (required; see ckpt log ID)")
	fl.StringVar(&o.Key, "key", "", "idempotency `KEY`: a restore with a key already applied appends nothing")
	fl.BoolVar(&o.Force, "force", false, "restore even an archived checkpoint")
	fl.BoolVar(&o.JSON, "json", false, "print the restored checkpoint as JSON")
	return cmd
}

func runRestore(ctx context.Context, o *RestoreOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if o.Rev < 1 {
		return fmt.Errorf("%w: --rev %d: give the revision to go back to, 1 or more (ckpt log %s lists them)", ckpt.ErrInvalid, o.Rev, o.ID)
	}
	return o.withStore(func(st ckpt.Store) error {
		c, err := ckpt.RestoreCheckpoint(ctx, st, o.ID, o.Rev, ckpt.Lifecycle{At: o.Now(), Actor: o.Actor, Key: o.Key, Force: o.Force})
		var refused *ckpt.RefusedError
		if err != nil && !errors.As(err, &refused) && (errors.Is(err, ckpt.ErrNotFound) || errors.Is(err, ckpt.ErrInvalid)) {
			return fmt.Errorf("%w: pick a revision from ckpt log %s", err, o.ID)
		}
		if err != nil {
			return err
		}
		if o.JSON {
			return writeJSON(o.IO.Out, c)
		}
		_, err = fmt.Fprintf(o.IO.Out, "%s  rev %d  restored to revision %d  (%s, %s)\n", c.ID, c.Rev, o.Rev, c.Progress.Count(), c.Status)
		return err
	})
}
