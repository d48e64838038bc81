package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/claude"
	"github.com/ckpt-dev/ckpt/codestate"
	"github.com/ckpt-dev/ckpt/process"
	"github.com/ckpt-dev/ckpt/render"
)

// Environment variables the hooks read besides CKPT_ID and CKPT_AGENT
// (package claude).
const (
	// EnvLoop turns the task loop on for every checkpoint the hooks write
	// (1, true, yes or on); a checkpoint's task_loop meta key overrides it.
	EnvLoop = "CKPT_LOOP"
	// EnvHookTimeout shortens the time a hook may take (a Go duration such
	// as 500ms); it never lengthens the defaults of package claude.
	EnvHookTimeout = "CKPT_HOOK_TIMEOUT"
)

// HookOptions are the inputs of `ckpt hook EVENT`.
type HookOptions struct {
	IO     IOStreams
	Event  string
	Client claude.Client
	Now    func() time.Time
	Getenv func(string) string
	// WorkDir is where the store and the repository are looked for when
	// the payload has no usable cwd.
	WorkDir string
	// OpenStore opens the store found from start; warnings the store
	// prints while working go to warn.
	OpenStore func(start string, warn io.Writer) (ckpt.Store, error)
	// Timeout, when > 0, shortens every hook call to at most this long.
	Timeout time.Duration
	Loop    claude.TaskLoop
	// Warnings are problems found before the run (a bad flag or variable);
	// they are reported with the run's own on the one stderr line.
	Warnings []string
}

func newHookCmd(f *factory) *cobra.Command {
	o := &HookOptions{IO: f.env.IOStreams, Getenv: f.env.getenv, WorkDir: f.env.WorkDir}
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
			if err := f.prepare(); err != nil {
				o.Warnings = append(o.Warnings, errorLine(err))
			}
			return nil
		},
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
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
		o.Now = func() time.Time { return f.now() }
		o.OpenStore = f.openHookStore
		o.Loop.Enabled = isTruthy(f.env.getenv(EnvLoop))
		if v := strings.TrimSpace(f.env.getenv(EnvHookTimeout)); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				o.Warnings = append(o.Warnings, fmt.Sprintf("%s=%q is not a positive duration such as 2s; using the default", EnvHookTimeout, v))
			} else {
				o.Timeout = d
			}
		}
		runHook(ctx, o)
		return nil
	})
	cmd.Flags().StringVar(&client, "client", "", "the `CLIENT` that runs the hook: claude (default), codex or gemini")
	return cmd
}

// isTruthy reads an on/off variable: 1, true, yes and on are on.
func isTruthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	b, _ := strconv.ParseBool(v)
	return b
}

// openHookStore opens the store a hook uses, found from start (the
// payload's cwd), through the factory so that it is the same store, with
// the same wrapping, as every command's.
func (f *factory) openHookStore(start string, warn io.Writer) (ckpt.Store, error) {
	g := *f
	env := *f.env
	env.WorkDir = start
	env.ErrOut = warn
	env.Getenv = withSpooling(env.Getenv) // a hook never loses a write to an absent server
	g.env = &env
	if f.store == nil {
		dir, err := g.hookStoreDir(start)
		if err != nil {
			return nil, err
		}
		g.storeFlag = dir
	}
	return g.openStore()
}

// runHook handles one hook event, fail-forward: it never returns an error
// and never panics. The output goes to stdout, every warning on one line to
// stderr.
func runHook(ctx context.Context, o *HookOptions) {
	warnings := append([]string(nil), o.Warnings...)
	var output []byte
	defer func() {
		if p := recover(); p != nil {
			output = nil
			warnings = append(warnings, fmt.Sprintf("internal error: %v", p))
		}
		if len(output) > 0 {
			o.IO.Out.Write(output)
		}
		if len(warnings) > 0 {
			line := strings.Join(strings.Fields(strings.Join(warnings, "; ")), " ")
			event := o.Event
			if event == "" {
				event = "?"
			}
			fmt.Fprintf(o.IO.ErrOut, "ckpt hook %s: warning: %s\n", event, line)
		}
	}()
	if o.Event == "" {
		return
	}
	ev, err := claude.ParseEvent(o.Event)
	if err != nil {
		warnings = append(warnings, err.Error())
		return
	}
	in, err := claude.ParseInput(o.IO.In)
	if err != nil {
		warnings = append(warnings, err.Error())
		return
	}
	start := o.WorkDir
	if cwd := filepath.Clean(in.CWD); in.CWD != "" && filepath.IsAbs(cwd) && isDir(cwd) {
		start = cwd
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	h := &claude.Handler{
		Client:   o.Client,
		Now:      o.Now,
		Getenv:   o.Getenv,
		RepoRoot: findRepoRoot(start),
		Loop:     o.Loop,
		StateDir: claude.StateDir(o.Getenv, getenvOr(o.Getenv, "HOME")),
		Process:  process.Client,
	}
	code := &codeProbe{dir: start, now: o.Now}
	h.Code = code.state
	var storeWarnings lockedBuffer
	// SessionStart's prompt: the whole history is verified first (issue 9).
	h.Prompt = func(c *ckpt.Checkpoint) string { return code.prompt(ctx, h.Store, c, &storeWarnings) }
	// Opening reads the store's config: bounded too, for a store on a
	// network drive that stopped answering.
	limit := claude.DefaultTimeout
	if ev == claude.EventSessionEnd {
		limit = claude.SessionEndTimeout
	}
	openCtx, cancelOpen := context.WithTimeout(ctx, limit)
	defer cancelOpen()
	var st ckpt.Store
	err = bounded(openCtx, func() error {
		var err error
		st, err = o.OpenStore(start, &storeWarnings)
		return err
	})
	if err != nil {
		h.OpenErr = fmt.Errorf("%s", errorLine(err))
	} else {
		defer st.Close()
		h.Store = &boundedStore{Store: st}
		steps := &hookSteps{store: h.Store, now: o.Now, project: projectDir(h.RepoRoot, start), agent: hookAgent(o.Client, o.Getenv), getenv: o.Getenv}
		h.SyncPlan = steps.syncPlan
		h.Final = steps.final()
	}
	res := h.Handle(ctx, ev, in)
	output = res.Output
	warnings = append(warnings, res.Warnings...)
	for _, l := range strings.Split(storeWarnings.String(), "\n") {
		if l = strings.TrimSpace(strings.TrimPrefix(l, "ckpt: warning:")); l != "" {
			warnings = append(warnings, l)
		}
	}
}

// hookAgent is the agent the hooks record, as package claude names it:
// $CKPT_AGENT, else the client's name.
func hookAgent(c claude.Client, getenv func(string) string) string {
	if getenv != nil {
		if a := strings.TrimSpace(getenv(claude.EnvAgent)); a != "" {
			return a
		}
	}
	switch c {
	case claude.Codex:
		return "codex"
	case claude.Gemini:
		return "gemini-cli"
	}
	return "claude-code"
}

// projectDir is the directory of the project a session works in: the
// repository, else the directory the session works in.
func projectDir(repoRoot, start string) string {
	if repoRoot != "" {
		return repoRoot
	}
	return start
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
			printWarning(warn, fmt.Sprintf("%s: verifying its whole history found damage: %v", c.ID, err))
		}
	}
	if c.Code != nil {
		now, _ := p.state(ctx)
		if w := codeSince(ctx, c.Code, now); w != "" {
			pr.Warnings = append(pr.Warnings, w)
		}
	}
	return pr.Markdown()
}

func getenvOr(getenv func(string) string, key string) string {
	if getenv == nil {
		return ""
	}
	return getenv(key)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
