package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
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
func handOverCmd(f *cmdutil.Factory, cmd *cobra.Command, o *HandOverOptions, reason, force, key string) {
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.fill(f, args)
		return runHandOver(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&o.Reason, "reason", o.Reason, reason)
	fl.BoolVar(&o.Force, "force", false, force)
	fl.StringVar(&o.Key, "key", "", key)
	fl.BoolVar(&o.JSON, "json", false, "print the archive name and continuation prompt as JSON")
}

func newTakeoverCmd(f *cmdutil.Factory) *cobra.Command {
	o := &HandOverOptions{common: newCommon(f), Reason: "crashed"}
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
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
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
		l := ckpt.Lifecycle{At: o.Now(), Actor: o.By, SessionID: o.SessionID, Reason: reason, Key: o.Key, Force: o.Force}
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
