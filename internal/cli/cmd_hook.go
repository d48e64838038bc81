package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/autockpt"
	"github.com/ckpt-dev/ckpt/internal/claude"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/codestate"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/protocols/plan"
)

// HookOptions are the inputs of `ckpt hook EVENT`: one claude.Call, with
// the parts of the hook that other packages own wired in (wireHook).
type HookOptions struct {
	claude.Call
}

func newHookCmd(f *cmdutil.Factory) *cobra.Command {
	o := &HookOptions{Call: claude.Call{In: f.Env.In, Out: f.Env.Out, ErrOut: f.Env.ErrOut, Getenv: f.Env.Var, WorkDir: f.Env.WorkDir}}
	var client string
	cmd := &cobra.Command{
		Use:   "hook EVENT",
		Short: "Handle one hook event of Claude Code, Codex or Gemini CLI (reads its JSON on stdin)",
		Long: `Handle one hook event of an agent client: read the client's hook JSON on
stdin, record what the event means on the session's checkpoint and print
what the client should do. ckpt hooks install registers it; you do not run it
by hand. What each event does is in docs/hooks.md:

  SessionStart        print the checkpoint's continuation prompt (creates nothing)
  UserPromptSubmit    create the checkpoint on the first prompt; heartbeat;
                      every 5th prompt a snapshot of the state
  PreToolUse          busy (a beat only)
  PostToolUse         record the files an edit wrote; sync a tracked plan.md
  PostToolUseFailure  working again (a beat only)
  SubagentStart       busy; SubagentStop: a step done by subagent:<type>
  Notification        waiting for a person (permission or idle prompt)
  Stop                last message; in task-loop mode keep going; else waiting
  StopFailure         waiting: the turn failed
  PreCompact          the final checkpoint: a session note and .ccc-progress.md
  SessionEnd          the same, within Claude Code's 1.5 s budget; ended

Every event beats with the presence it means and the client's process, so
views tell working, busy, waiting, ended and dead apart. The checkpoint is
$CKPT_ID, else <project>/session-<session id>, else the repository's name.
A session's first write creates it, never SessionStart (older clients fired
a stray SessionStart on --resume). $CKPT_LOOP=1 turns the task loop on for
every checkpoint (or ckpt update ID --meta task_loop=true for one). Counters
and prompt snapshots live in $CKPT_STATE_DIR, else $XDG_STATE_HOME/ckpt,
else ~/.local/state/ckpt.

A hook never breaks the agent's session: whatever goes wrong (no store, a bad
payload, a locked or damaged checkpoint) it exits 0, prints nothing on stdout
and one warning line on stderr.`,
		Example: `  echo '{"session_id":"s1","source":"startup","cwd":"'$PWD'"}' | ckpt hook SessionStart
  ckpt hook AfterAgent --client gemini < payload.json`,
		Args: cobra.ArbitraryArgs,
		// A hook must not fail on a flag a newer ckpt installed.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := prepare(f, cmd); err != nil {
				o.Warnings = append(o.Warnings, errorLine(err))
			}
			return nil
		},
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		if len(args) != 1 {
			o.Warnings = append(o.Warnings, fmt.Sprintf("ckpt hook takes one event name, got %d arguments: see ckpt hook --help", len(args)))
		} else {
			o.Event = args[0]
		}
		o.Client = claude.Claude
		if client != "" {
			c, err := claude.ParseClient(client)
			if err != nil {
				o.Warnings = append(o.Warnings, err.Error())
			} else {
				o.Client = c
			}
		}
		o.Now = func() time.Time { return f.Now() }
		o.OpenStore = func(start string, warn io.Writer) (ckpt.Store, error) { return openHookStore(f, start, warn) }
		o.Loop.Enabled = claude.IsTruthy(f.Env.Var(claude.EnvLoop))
		if v := strings.TrimSpace(f.Env.Var(claude.EnvHookTimeout)); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				o.Warnings = append(o.Warnings, fmt.Sprintf("%s=%q is not a positive duration such as 2s; using the default", claude.EnvHookTimeout, v))
			} else {
				o.Timeout = d
			}
		}
		o.Process = process.Client
		o.Wire = wireHook(f, o.Getenv)
		claude.Run(ctx, o.Call)
		return nil
	})
	cmd.Flags().StringVar(&client, "client", "", "the `CLIENT` that runs the hook: claude (default), codex or gemini")
	return cmd
}

// openHookStore opens the store a hook uses, found from start (the
// payload's cwd), through the factory so that it is the same store, with
// the same wrapping, as every command's.
func openHookStore(f *cmdutil.Factory, start string, warn io.Writer) (st ckpt.Store, err error) {
	defer func() {
		if err != nil {
			// The hook's warning says what to do, as the CLI's errors do.
			err = errors.New(errorLine(err))
		}
	}()
	g := *f
	env := *f.Env
	env.WorkDir = start
	env.ErrOut = warn
	env.Getenv = withSpooling(env.Getenv) // a hook never loses a write to an absent server
	g.Env = &env
	if f.Store == nil {
		if dir := g.Location(); dir != "" {
			g.StoreFlag = dir
		} else {
			return openNearestStore(&g, start)
		}
	}
	return g.OpenStore()
}

// openNearestStore opens the store filestore.Find finds from start. A
// session mostly works at its project's root, so the store there is opened
// first, which spares the walk's stat on every hook call; when that fails,
// the walk decides, and a store it finds there after all reports its own
// error.
func openNearestStore(f *cmdutil.Factory, start string) (ckpt.Store, error) {
	here := filepath.Join(start, filestore.StoreDirName)
	st, err := openFoundStore(f, here)
	if err == nil {
		return st, nil
	}
	dir, ferr := filestore.Find(start)
	if ferr != nil {
		return nil, ferr
	}
	if dir == here {
		return nil, err
	}
	return openFoundStore(f, dir)
}

// openFoundStore opens the filestore at dir as openStore would, with the
// command's clock and the store's mirrors; dir was found, not given, so
// there is no --store or CKPT_STORE to check.
func openFoundStore(f *cmdutil.Factory, dir string) (ckpt.Store, error) {
	st, err := filestore.Open(dir)
	if err != nil {
		return nil, err
	}
	st.SetClock(f.Now)
	return wrapStore(f, st), nil
}

// wireHook fills the parts of a hook's Handler that other packages own
// for the events that use them (claude.Call.Wire): the code state and the
// continuation prompt (codestate, render), plan sync (protocols/plan) and
// the final checkpoint's four steps (autockpt, its tracker step run by
// ckpt-server). A store that could not be opened is reported with the
// CLI's hint.
func wireHook(f *cmdutil.Factory, getenv func(string) string) func(context.Context, *claude.Handler, string, io.Writer) {
	return func(ctx context.Context, h *claude.Handler, start string, warn io.Writer) {
		code := &codeProbe{dir: start, now: h.Now}
		h.Code = code.state
		// SessionStart's prompt: the whole history is verified first (issue 9).
		h.Prompt = func(c *ckpt.Checkpoint) string { return code.prompt(ctx, h.Store, c, warn) }
		if h.OpenErr != nil {
			return
		}
		project := h.RepoRoot
		if project == "" {
			project = start
		}
		actor := ckpt.Actor{Agent: claude.AgentID(h.Client, getenv)}
		h.SyncPlan = func(ctx context.Context, id, path string) error {
			return plan.SyncTracked(ctx, h.Store, id, path, plan.TrackedSync{Project: project, Now: h.Now, Actor: actor})
		}
		auto := autockpt.Auto{Store: h.Store, Dir: project, Getenv: getenv, Now: h.Now, Tracker: trackerStep(f, h.Store, project)}
		h.Final = []claude.FinalStep{{Name: "checkpoint (auto profile)", Run: auto.Run}}
		h.AtStop = []claude.FinalStep{{Name: "checkpoint at the gate (auto profile)", Run: auto.AtGate}}
		h.Plan = plan.Triggers{Store: h.Store, Project: project, Now: h.Now, Actor: actor}
	}
}

// codeProbe reads the session's code state at most once per hook call:
// the prompt and the recorded state share it.
type codeProbe struct {
	dir  string
	now  func() time.Time
	once sync.Once
	cs   *ckpt.CodeState
	err  error
}

func (p *codeProbe) state(ctx context.Context) (*ckpt.CodeState, error) {
	p.once.Do(func() { p.cs, p.err = codestate.Probe(ctx, p.dir, process.Host(), p.now()) })
	return p.cs, p.err
}

// prompt is c's continuation prompt, told what changed in the code since
// the last session recorded it.
func (p *codeProbe) prompt(ctx context.Context, st ckpt.Store, c *ckpt.Checkpoint, warn io.Writer) string {
	pr := render.NewPrompt(c)
	if st != nil {
		if _, err := ckpt.VerifyChain(ctx, st, c.ID); errors.Is(err, ckpt.ErrCorrupt) {
			pr.Damaged = err.Error()
			cmdutil.PrintWarning(warn, fmt.Sprintf("%s: verifying its whole history found damage: %v", c.ID, err))
		}
	}
	if c.Code != nil {
		now, _ := p.state(ctx)
		if w := codestate.Note(ctx, c.Code, now); w != "" {
			pr.Warnings = append(pr.Warnings, w)
		}
	}
	return pr.Markdown()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
