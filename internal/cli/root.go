package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/buildinfo"
	"github.com/ckpt-dev/ckpt/remote"
)

// Main runs the command line in env.Args and returns the exit code (see
// ExitCode). Errors are printed on env.ErrOut as one `ckpt: …` line.
func Main(env *Env) int {
	return run(&factory{env: env})
}

// run executes f.env.Args with the factory f.
func run(f *factory) int {
	env := f.env
	root := newRootCmd(f, env.Args)
	root.SetArgs(env.Args)
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.ErrOut)
	err := root.ExecuteContext(context.Background())
	if err == nil {
		err = f.deferred
	}
	if err != nil && !f.reached {
		// cobra failed before any command ran: an unknown command, a bad
		// flag or a wrong number of arguments.
		err = usageError{err}
	}
	var spooled *remote.SpooledError
	if errors.As(err, &spooled) {
		// Not lost, only late: the next ckpt call delivers it.
		printWarning(env.ErrOut, spooled.Error())
		return 0
	}
	if err != nil {
		printError(env.ErrOut, err)
	}
	return ExitCode(err)
}

// factory gives commands what the root knows: streams, clock, acting agent
// and the store, resolved from the persistent flags and the environment.
type factory struct {
	env       *Env
	storeFlag string // --store
	agentFlag string // --agent
	// reached is set when a command's own code starts (see runE); errors
	// before that, from cobra's parsing and checks, are usage errors.
	reached bool
	now     func() time.Time
	// store, when set, is the store every command uses instead of finding
	// one (tests run commands against a memstore this way).
	store ckpt.Store
	// commands are the commands built outside this package that replace
	// the dispatchers to ckpt-server (see MainWith); nil in ckpt itself.
	commands map[string]func(*factory) *cobra.Command
	// openPG opens a PostgreSQL store (ckpt-server's, see Extensions); nil
	// in ckpt, which hands such stores to ckpt-server.
	openPG func(f *factory, dsn string) (ckpt.Store, error)
	// deferred is an error a help function met (it cannot return one).
	deferred error
}

// prepare runs before every command: it resolves the clock, and hands a
// command over a PostgreSQL store to ckpt-server (dispatchStore).
func (f *factory) prepare() error {
	clock := f.env.Now
	if clock == nil {
		clock = time.Now
	}
	f.now = func() time.Time { return clock().UTC() }
	if v := f.env.getenv(EnvNow); v != "" {
		t, err := parseNow(v)
		if err != nil {
			return err
		}
		f.now = func() time.Time { return t }
	}
	return f.dispatchStore()
}

// The range of clocks CKPT_NOW may pin: from the Unix epoch (the zero
// time means "never" in a checkpoint, and a store would take its own clock
// instead) to the last day in Unix nanoseconds, so no time ckpt compares
// with it is further away than a time.Duration holds.
var (
	minNow = time.Unix(0, 0).UTC()
	maxNow = time.Unix(0, math.MaxInt64).UTC().Truncate(24 * time.Hour)
)

// parseNow reads a CKPT_NOW value: an RFC 3339 time in [minNow, maxNow]. A
// value ckpt would not use as given is refused, never ignored.
func parseNow(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s=%q is not an RFC 3339 time: use a form such as 2026-01-15T14:30:00Z, or unset it", ckpt.ErrInvalid, EnvNow, v)
	}
	t = t.UTC()
	if t.Before(minNow) || t.After(maxNow) {
		return time.Time{}, fmt.Errorf("%w: %s=%q is outside the clock ckpt can use (%s to %s): give a time in that range, or unset it",
			ckpt.ErrInvalid, EnvNow, v, minNow.Format(time.RFC3339), maxNow.Format(time.RFC3339))
	}
	return t, nil
}

// runE is the RunE of every command: it marks that the command's own code
// runs, then calls run.
func (f *factory) runE(run func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		f.reached = true
		return run(cmd.Context(), args)
	}
}

// actor is the acting agent and session recorded on every event.
func (f *factory) actor() ckpt.Actor {
	agent := f.agentFlag
	if agent == "" {
		agent = f.env.getenv(EnvAgent)
	}
	return ckpt.Actor{Agent: agent, Session: f.env.getenv(EnvSession)}
}

// user is the login name of the person running ckpt ($USER, else
// $LOGNAME, else the account the process runs as: containers often set
// neither variable), or "" when none can be found.
func (f *factory) user() string {
	for _, k := range []string{"USER", "LOGNAME"} {
		if v := strings.TrimSpace(f.env.getenv(k)); v != "" {
			return v
		}
	}
	if f.env.LookupUser != nil {
		return f.env.LookupUser()
	}
	return ""
}

// common returns the streams, clock and store every command uses.
func (f *factory) common() common {
	return common{
		IO:    f.env.IOStreams,
		Now:   func() time.Time { return f.now() },
		Store: f.openStore,
	}
}

// writer returns the options every write command shares.
func (f *factory) writer() writeOptions {
	return writeOptions{common: f.common()}
}

// common is what every command gets from the root.
type common struct {
	IO  IOStreams
	Now func() time.Time
	// Store opens the store; the caller closes it.
	Store func() (ckpt.Store, error)
}

const rootLong = `ckpt records what an agent is doing (status, steps, progress, decisions,
blockers, errors, files, next steps) with one fast, durable, atomic call, and
shows it back to people, orchestrators and resumed sessions.

Every change is an event appended to the checkpoint's tamper-evident history.
The store is a .ckpt/ directory found by walking up from the working
directory (like git), or given by --store or CKPT_STORE.

Environment:
  CKPT_STORE    the store, like --store: a directory (the .ckpt directory
                itself), a PostgreSQL URL (postgres://USER@HOST/DB) or a
                ckpt serve server (https://HOST:PORT)
  CKPT_TOKEN    the bearer token for a server store (ckpt token create)
  CKPT_SPOOL    1: a write a server cannot take waits in this machine's
                spool ($XDG_STATE_HOME/ckpt/spool) and the command exits 0;
                the next call delivers it (the hooks always spool)
  CKPT_MIRRORS  the mirror list file (ckpt mirror)
  CKPT_AGENT    the acting agent, like --agent
  CKPT_SESSION  the acting session ID, recorded on every event
  CKPT_NOW      a fixed clock in RFC 3339 (e.g. 2026-01-15T14:30:00Z) for
                scripts and tests
  CKPT_ID, CKPT_LOOP, CKPT_HOOK_TIMEOUT, CKPT_STATE_DIR
                the hooks' (ckpt hook --help, docs/hooks.md)

Exit codes:
  0 ok   1 other failure   2 usage or invalid input   3 not found
  4 revision conflict (--if-rev)   5 already exists   6 no store
  7 store damaged (or check found errors)   8 cycle limit reached
  9 not resumable (use --force)   10 stale found (ckpt stale)
  11 only warnings found (ckpt stale)

The full reference is docs/cli.md.`

// verb is one top-level command: its name, its group in help ("" for
// none) and its constructor.
type verb struct {
	name, group string
	build       func(*factory) *cobra.Command
}

// verbs lists every verb in the order help shows them. (A function, not a
// variable: the demo's constructor runs command lines, so a variable would
// refer to itself.)
func verbs() []verb {
	return []verb{
		{"start", "record", newStartCmd}, {"step", "record", newStepCmd}, {"update", "record", newUpdateCmd},
		{"decision", "record", recordCmd("decision")}, {"block", "record", recordCmd("block")}, {"unblock", "record", recordCmd("unblock")},
		{"error", "record", recordCmd("error")}, {"accept", "record", recordCmd("accept")}, {"cycle", "record", recordCmd("cycle")},
		{"note", "record", recordCmd("note")}, {"tell", "record", recordCmd("tell")}, {"beat", "record", newBeatCmd},
		{"done", "record", recordCmd("done")}, {"fail", "record", recordCmd("fail")}, {"wait", "record", recordCmd("wait")},
		{"show", "read", newShowCmd}, {"ls", "read", newLsCmd}, {"log", "read", newLogCmd},
		{"init", "store", newInitCmd}, {"check", "store", newCheckCmd}, {"repair", "store", newRepairCmd},
		{"migrate", "store", serverVerb("migrate")}, {"serve", "store", serverVerb("serve")}, {"token", "store", serverVerb("token")},
		{"resume", "lifecycle", newResumeCmd}, {"takeover", "lifecycle", newTakeoverCmd}, {"restart", "lifecycle", newRestartCmd},
		{"archive", "lifecycle", newArchiveCmd}, {"restore", "lifecycle", newRestoreCmd}, {"prune", "lifecycle", newPruneCmd},
		{"inbox", "watch", newInboxCmd}, {"status", "watch", newStatusViewCmd}, {"progress", "watch", newProgressCmd}, {"stale", "watch", newStaleCmd},
		{"monitor", "watch", newMonitorCmd},
		{"import", "protocols", newImportCmd}, {"export", "protocols", newExportCmd}, {"mirror", "protocols", newMirrorCmd},
		{"plan", "protocols", newPlanCmd}, {"checkpoint", "protocols", newCheckpointCmd},
		{"hooks", "integrations", newHooksCmd}, {"hook", "integrations", newHookCmd}, {"mcp", "integrations", serverVerb("mcp")},
		{"demo", "", newDemoCmd}, {"version", "", newVersionCmd},
	}
}

// verbOf returns the verb args run when it is one of verbs, skipping the
// root's own flags before it; "" otherwise (help, an unknown word, no
// verb), when every verb must be there for help and suggestions.
func verbOf(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--store" || a == "--agent":
			i++ // its value
		case strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "--agent="):
		case strings.HasPrefix(a, "-"):
			return "" // --help, --version, --, or a flag only a verb knows
		default:
			for _, v := range verbs() {
				if v.name == a {
					return a
				}
			}
			return ""
		}
	}
	return ""
}

// newRootCmd builds the command tree for the command line args.
func newRootCmd(f *factory, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:           "ckpt",
		Short:         "Durable checkpoints for agent work",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return f.prepare()
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%v (see %s --help)", err, cmd.CommandPath())}
	})
	root.Version = buildinfo.Read().String()
	root.SetVersionTemplate("{{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&f.storeFlag, "store", "", "the store `DIR` (the .ckpt directory itself); default: $CKPT_STORE, else the nearest .ckpt/ walking up")
	pf.StringVar(&f.agentFlag, "agent", "", "the acting agent `ID`, recorded on each event; default: $CKPT_AGENT")

	root.AddGroup(
		&cobra.Group{ID: "record", Title: "Record work:"},
		&cobra.Group{ID: "read", Title: "Read:"},
		&cobra.Group{ID: "store", Title: "Store:"},
		&cobra.Group{ID: "lifecycle", Title: "Resume and recover:"},
		&cobra.Group{ID: "watch", Title: "Watch:"},
		&cobra.Group{ID: "protocols", Title: "Seed protocols:"},
		&cobra.Group{ID: "integrations", Title: "Agent clients:"},
	)
	// Only the verb the command line names is built, when it names one:
	// building all of them (their flags, help texts) would cost every
	// process, every hook call among them, about as much as Go's own start.
	wanted := verbOf(args)
	for _, v := range verbs() {
		if wanted != "" && v.name != wanted {
			continue
		}
		c := v.build(f)
		c.GroupID = v.group
		root.AddCommand(c)
	}
	return root
}

// exactArgs is cobra.ExactArgs with a message naming the arguments wanted.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s (got %d argument(s)); see %s --help", cmd.Name(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}

// rangeArgs is cobra.RangeArgs with a message naming the arguments wanted.
func rangeArgs(min, max int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return usagef("%s takes %s (got %d argument(s)); see %s --help", cmd.Name(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}
