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

// writeOptions are shared by every command that appends an event.
type writeOptions struct {
	common
	// Actor is the acting agent and session, recorded on the event.
	Actor ckpt.Actor
	// User is the login of the person running ckpt, recorded as the
	// event's actor ("user:NAME") when there is no acting agent.
	User string
	// IfRev, when > 0, makes the write a compare-and-swap (--if-rev).
	IfRev int64
	// Key is the idempotency key (--key): a repeat appends nothing and
	// prints the first result.
	Key string
	// JSON prints the resulting state as JSON instead of a summary line.
	JSON bool
}

// addWriteFlags registers --if-rev, --key and --json on a write command.
func addWriteFlags(cmd *cobra.Command, o *writeOptions) {
	fl := cmd.Flags()
	fl.Int64Var(&o.IfRev, "if-rev", 0, "write only if the checkpoint is at revision `N` (compare-and-swap; exit 4 otherwise)")
	fl.StringVar(&o.Key, "key", "", "idempotency `KEY`: if an event with this key was applied already, append nothing and print its result")
	fl.BoolVar(&o.JSON, "json", false, "print the resulting checkpoint as JSON")
}

// runWrite is the RunE of write commands: it fills the acting agent and
// the user, then calls run.
func runWrite(f *cmdutil.Factory, o *writeOptions, run func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return f.RunE(func(ctx context.Context, args []string) error {
		o.Actor = f.Actor()
		o.User = f.User()
		return run(ctx, args)
	})
}

// eventActor is who an event records as having made it: the acting agent
// (--agent, CKPT_AGENT), else the user running ckpt as "user:NAME", so that
// ckpt log names someone for every change. appendEvent refines the
// second case to the checkpoint's own agent (agentsWork).
func (o *writeOptions) eventActor() ckpt.Actor {
	a := o.Actor
	if a.Agent == "" && o.User != "" {
		a.Agent = "user:" + o.User
	}
	return a
}

// agentsWork reports whether a write of type t that names no agent is
// recorded as made by the checkpoint's own agent (`ckpt start ID --agent A`
// then `ckpt step ID …` is A's work, as the quick start plays it), else by
// the person ("user:NAME"). The store decides it on the state it appends
// to (ckpt.AppendOptions.AsCheckpointAgent), so the write reads nothing
// first. A message told to the agent and the lifecycle commands (takeover,
// restart, restore, resume, archive) are not the agent's own work and keep
// the person's name.
func (o *writeOptions) agentsWork(t ckpt.EventType) bool {
	return o.Actor.Agent == "" && t != ckpt.EventCreated && t != ckpt.EventTold
}

// flagName names a request's fields as ckpt's flags do (request.Names).
func flagName(field string) string {
	if field == "message" {
		return "the second argument"
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

// appendEvent builds r's event (package request), appends it to
// checkpoint id in one store call (one durable write) and prints the
// result.
func (o *writeOptions) appendEvent(ctx context.Context, id string, r request.Request) error {
	if err := ckpt.ValidateID(id); err != nil {
		return err
	}
	if o.IfRev < 0 {
		return fmt.Errorf("%w: --if-rev %d: give a revision of 1 or more (see ckpt show %s)", ckpt.ErrInvalid, o.IfRev, id)
	}
	e, err := request.NewEvent(r, request.Write{At: o.Now(), Actor: o.eventActor(), Key: o.Key, Names: flagName})
	if err != nil {
		return err
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	res, err := st.Append(ctx, id, e, ckpt.AppendOptions{IfRev: o.IfRev, AsCheckpointAgent: o.agentsWork(e.Type)})
	for _, w := range res.Warnings {
		cmdutil.PrintWarning(o.IO.ErrOut, w)
	}
	if cerr := st.Close(); err == nil && cerr != nil {
		// The event is durable; only releasing the store failed.
		cmdutil.PrintWarning(o.IO.ErrOut, "closing the store: "+cerr.Error())
	}
	if errors.Is(err, ckpt.ErrNotFound) && e.Type != ckpt.EventCreated {
		// The same advice whichever backend said it.
		return fmt.Errorf("%w: %s: create it first with ckpt start %s (ckpt ls lists the ones there are)", ckpt.ErrNotFound, id, id)
	}
	if err != nil {
		return err
	}
	if res.Replayed {
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("key %q was applied already as revision %d: nothing appended", o.Key, res.Event.Seq))
	} else if open := res.State.OpenSteps(); e.Type == ckpt.EventStatus && res.State.Status == ckpt.StatusDone && len(open) > 0 {
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s is done with %d of %d steps unfinished (%s): finish or skip each with ckpt step %s STEP --done or --skip",
			id, len(open), len(res.State.Steps), strings.Join(open, ", "), render.ShellArgs([]string{id})))
	}
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, res.State)
	}
	_, err = fmt.Fprintln(o.IO.Out, render.SummaryLine(res.State, res.Event))
	return err
}

// withStore opens the store, runs fn and closes the store.
func (c common) withStore(fn func(ckpt.Store) error) error {
	st, err := c.Store()
	if err != nil {
		return err
	}
	err = fn(st)
	return errors.Join(err, closeErr(st.Close(), err))
}

// closeErr reports a close error only when nothing failed before it.
func closeErr(cerr, prior error) error {
	if prior != nil || cerr == nil {
		return nil
	}
	return fmt.Errorf("closing the store: %w", cerr)
}
