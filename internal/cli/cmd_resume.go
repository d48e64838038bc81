package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// ResumeOptions are the inputs of `ckpt resume`.
type ResumeOptions struct {
	common
	// nextSession's Actor is recorded on the session.resumed event. A
	// non-empty Actor.Agent that is not the checkpoint's agent becomes its
	// agent.
	nextSession
	AgentType string // the resuming agent's type, when it replaces the recorded agent
	AgentName string
	Key       string // idempotency key of the session.resumed event
	Force     bool   // resume a done, not-resumable or archived checkpoint anyway
	JSON      bool
	// Budget bounds the prompt, in tokens (render.EstimateTokens); For
	// names the client to continue in (claude, codex, gemini), whose
	// command is printed after the prompt.
	Budget int
	For    string
}

// nextSession is which checkpoint a new session continues, who starts it
// and where: resume, takeover and restart fill it alike (fill).
type nextSession struct {
	ID    string
	Actor ckpt.Actor
	// By is who the lifecycle event records: Actor, else the person
	// running ckpt ("user:NAME"), never nobody.
	By ckpt.Actor
	// SessionID is the new session's ID; empty: a fresh random one.
	SessionID string
	// WorkDir is where the new session works: the prompt says what changed
	// in the code there since the checkpoint recorded it.
	WorkDir string
}

// fill sets s from the command's ID argument, the acting agent and the
// working directory.
func (s *nextSession) fill(f *cmdutil.Factory, args []string) {
	s.ID = args[0]
	s.Actor = f.Actor()
	s.By = f.EventActor()
	s.SessionID = s.Actor.Session
	s.WorkDir = f.Env.WorkDir
}

func newResumeCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ResumeOptions{common: newCommon(f)}
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Start a new session on a checkpoint and print its continuation prompt",
		Long: `Start a new session on checkpoint ID (a session.resumed event: a new session
ID and number) and print the continuation prompt a new session needs to go on
without the old conversation: goal, status, progress, current step, done and
remaining steps, decisions, active blockers and errors, files touched, resume
instructions and the next action. The prompt is Markdown within a budget of about 2,000
tokens (--budget; a token is counted as 4 bytes of ASCII text or one other
character), filled in order of importance; long lists are summarised.
--json prints the same as data. --for claude|codex|gemini also prints the
command that continues the work in that client.

The session ID is $CKPT_SESSION when set (a hook knows its session), else a
fresh random one. The resuming agent is --agent or $CKPT_AGENT; when it is not
the checkpoint's agent it becomes the agent (use ckpt takeover instead to
archive the old agent's state first).

Before it starts the session it verifies the checkpoint's whole history
(every record checks itself and chains on from the one before, where the
store can: a local store). Damage is a warning on stderr and the first line
of the prompt, no session is started (the store takes no writes to a
damaged checkpoint until ckpt repair), and the exit code is 7.

A checkpoint that is done, marked not resumable (update --resumable=false) or
archived is refused with exit code 9 unless --force is given. Resuming more
than 3 times without progress is flagged as a crash loop: a warning on stderr
and in the prompt.`,
		Example: `  ckpt resume kai-7/secondary-a
  CKPT_SESSION=$SESSION_ID ckpt resume kai-7/secondary-a --json
  ckpt resume loop/T060 --force
  ckpt resume app/session-1a2b --for codex --budget 1500`,
		Args: cmdutil.ExactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.fill(f, args)
		return runResume(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&o.AgentType, "agent-type", "", "the resuming agent's `TYPE`, when --agent names a new agent")
	fl.StringVar(&o.AgentName, "agent-name", "", "the resuming agent's `NAME`, when --agent names a new agent")
	fl.StringVar(&o.Key, "key", "", "idempotency `KEY`: a resume with a key already applied starts no new session and prints the prompt again")
	fl.BoolVar(&o.Force, "force", false, "resume even a done, not-resumable or archived checkpoint")
	fl.BoolVar(&o.JSON, "json", false, "print the continuation prompt as JSON")
	fl.IntVar(&o.Budget, "budget", render.DefaultBudget, "bound the prompt to about `TOKENS` tokens (at least 400)")
	fl.StringVar(&o.For, "for", "", "also print the command that continues the work in `CLIENT` (claude, codex or gemini)")
	return cmd
}

func runResume(ctx context.Context, o *ResumeOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if err := checkResumeFor(o.For); err != nil {
		return err
	}
	if o.Budget == 0 {
		o.Budget = render.DefaultBudget
	}
	if o.Budget < render.MinBudget {
		return fmt.Errorf("%w: --budget %d: give at least %d tokens", ckpt.ErrInvalid, o.Budget, render.MinBudget)
	}
	r := request.Resume{Agent: o.Actor.Agent, AgentType: o.AgentType, AgentName: o.AgentName, Force: o.Force}
	return o.withStore(func(st ckpt.Store) error {
		// The prompt's "Last update" is when the session that stopped last
		// wrote (agent-checkpoints' (seed 002) "Last Update: 14:30 (45 minutes ago)"), not the
		// resume's own time.
		var before time.Time
		if prev, err := st.Get(ctx, o.ID, 0); err == nil {
			before = prev.UpdatedAt
		}
		l := ckpt.Lifecycle{At: o.Now(), Actor: o.By, SessionID: o.SessionID, Key: o.Key}
		res, err := r.Run(ctx, st, o.ID, l, flagName)
		if res.Damage != nil {
			cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s: verifying its whole history found damage: %v", o.ID, res.Damage))
		}
		if err != nil {
			return err
		}
		out := withCodeSince(ctx, render.NewContinuation(res.State, ""), o.WorkDir)
		if !before.IsZero() && res.Damage == nil {
			out.UpdatedAt = before
		}
		if res.Damage != nil {
			// No session was started; the prompt of the state as last read
			// opens with the damage, so a session that reads it knows.
			out.Damaged = res.Damage.Error()
			if err := writeContinuation(o.IO, out, o.JSON); err != nil {
				return err
			}
			return fmt.Errorf("%w: %s: no session was started, its history is damaged; the prompt above is its state as last read", ckpt.ErrCorrupt, o.ID)
		}
		if res.Was != "" {
			cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s was %s's; it is now %s's (ckpt takeover archives the old agent's state first)", o.ID, res.Was, r.Agent))
		}
		if o.JSON {
			return writeContinuation(o.IO, out, true)
		}
		text := budgetText(out, o.Budget)
		if o.For != "" {
			text += continueIn(o.For, o.ID)
		}
		return writeContinuationText(o.IO, out, text)
	})
}

// writeContinuation prints out: with asJSON the JSON object, else its
// text. A crash loop is
// also reported on stderr, where an orchestrator's log sees it.
func writeContinuation(streams cmdutil.IOStreams, out render.Continuation, asJSON bool) error {
	if asJSON {
		warnCrashLoop(streams, out)
		return cmdutil.WriteJSON(streams.Out, out)
	}
	return writeContinuationText(streams, out, out.Text())
}

// writeContinuationText prints text, out's prompt as rendered, and reports
// a crash loop on stderr.
func writeContinuationText(streams cmdutil.IOStreams, out render.Continuation, text string) error {
	warnCrashLoop(streams, out)
	return writeString(streams.Out, render.Terminal(text))
}

// warnCrashLoop reports a crash loop on stderr, where an orchestrator's
// log sees it.
func warnCrashLoop(streams cmdutil.IOStreams, out render.Continuation) {
	if out.CrashLoop {
		cmdutil.PrintWarning(streams.ErrOut, fmt.Sprintf("%s: crash loop: resumed %d times without progress (more than %d); find out why its sessions end before resuming again (ckpt log %s shows them)",
			out.ID, out.ResumesWithoutProgress, ckpt.CrashLoopResumes, out.ID))
	}
}

// writeString writes s to w.
func writeString(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}
