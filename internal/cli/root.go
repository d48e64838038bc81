package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/spool"
)

// Main runs the command line in env.Args with the verbs and stores of
// program p, and returns the exit code (see ExitCode). Errors are printed on
// env.ErrOut as one `ckpt: …` line.
func Main(env *cmdutil.Env, p Program) int {
	return run(newFactory(env, p), p)
}

// runOn runs env's command line of ckpt's program against the store st
// (nil: the store the command line names), as the demo and tests do.
func runOn(env *cmdutil.Env, st ckpt.Store) int {
	p := ckptProgram()
	f := newFactory(env, p)
	f.Store = st
	return run(f, p)
}

// run executes f.Env.Args with the factory f and the verbs of p.
func run(f *cmdutil.Factory, p Program) int { return runLine(f, p, true) }

// runLine is run, through runDirect when direct and it takes the line,
// else through cobra's Execute.
func runLine(f *cmdutil.Factory, p Program, direct bool) int {
	env := f.Env
	args := versionAlias(env.Args)
	var err error
	if direct {
		err, direct = runDirect(f, p, args)
	}
	if !direct {
		root := newRootCmd(f, p, args)
		root.SetArgs(args)
		root.SetIn(env.In)
		root.SetOut(env.Out)
		root.SetErr(env.ErrOut)
		err = root.ExecuteContext(context.Background())
	}
	if err == nil {
		err = f.Deferred
	}
	if err != nil && !f.Reached() {
		// cobra failed before any command ran: an unknown command, a bad
		// flag or a wrong number of arguments.
		err = cmdutil.UsageError(err)
	}
	var spooled *spool.SpooledError
	if errors.As(err, &spooled) {
		// Not lost, only late: the next ckpt call delivers it.
		cmdutil.PrintWarning(env.ErrOut, spooled.Error())
		return 0
	}
	if err != nil {
		printError(env.ErrOut, err)
	}
	return ExitCode(err)
}

// prepare runs before every command (cmd): it resolves the clock, and
// hands a command over a store this binary leaves to another (in ckpt a
// PostgreSQL store or a server's) to it before the command reads
// anything, unless the store's keeper takes it: ckpt-pg for PostgreSQL,
// ckpt-server for a server's store and for the server commands.
func prepare(f *cmdutil.Factory, cmd *cobra.Command) error {
	if err := f.Prepare(); err != nil {
		return err
	}
	if useKeeper(f, cmd) || !f.HandedOver() || keeperLocal(cmd) {
		return nil
	}
	f.MarkReached() // not a usage error
	program := PGProgram
	if httpapi.IsURL(f.Location()) {
		program = ServerProgram // a server's store: remote is linked there
	}
	for c := cmd; c != nil && c.HasParent(); c = c.Parent() {
		if !c.Parent().HasParent() && IsServerCommand(c.Name()) {
			program = ServerProgram
		}
	}
	return execProgram(f, program)
}

// newCommon returns the streams, clock and store every command uses.
func newCommon(f *cmdutil.Factory) common {
	return common{
		IO:    f.Env.IOStreams,
		Now:   f.Now,
		Store: f.OpenStore,
	}
}

// newWriter returns the options every write command shares.
func newWriter(f *cmdutil.Factory) writeOptions {
	return writeOptions{common: newCommon(f)}
}

// common is what every command gets from the root.
type common struct {
	IO  cmdutil.IOStreams
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
  CKPT_KEEPER   off: a write over PostgreSQL goes straight to the database
                and starts no keeper (ckpt keeper --help)
  CKPT_KEEPER_IDLE
                how long a keeper waits for a request before it exits (5m)
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

// verbOf returns the verb args run when it is one of verbs, skipping the
// root's own flags before it; "" otherwise (help, an unknown word, no
// verb), when every verb must be there for help and suggestions.
func verbOf(args []string, verbs []Verb) string {
	verb, _ := verbAt(args, verbs)
	return verb
}

// verbAt is verbOf with the verb's index in args (-1 with no verb).
func verbAt(args []string, verbs []Verb) (string, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--store" || a == "--agent":
			i++ // its value
		case strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "--agent=") || a == "--no-keeper":
		case strings.HasPrefix(a, "-"):
			return "", -1 // --help, --version, --, or a flag only a verb knows
		default:
			for _, v := range verbs {
				if v.Name == a {
					return a, i
				}
			}
			return "", -1
		}
	}
	return "", -1
}

// asksHelp reports whether args may ask for help (--help, or -h alone or
// among other short flags), when a command's flags are listed.
func asksHelp(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case strings.HasPrefix(a, "--help"):
			return true
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'h'):
			return true
		}
	}
	return false
}

// versionAlias returns args with a --version or -v given before any verb
// (after global flags only) replaced by the verb version, which prints the
// same line; args itself is not changed.
func versionAlias(args []string) []string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--store" || a == "--agent":
			i++ // its value
		case strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "--agent=") || a == "--no-keeper":
		case a == "--version" || a == "-v":
			out := slices.Clone(args)
			out[i] = "version"
			return out
		default:
			return args
		}
	}
	return args
}

// addRootFlags gives root the persistent flags and the pre-run every
// command line has (runDirect's root has nothing else).
func addRootFlags(root *cobra.Command, f *cmdutil.Factory) {
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		return prepare(f, cmd)
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.StoreFlag, "store", "", "the store `DIR` (the .ckpt directory itself); default: $CKPT_STORE, else the nearest .ckpt/ walking up")
	pf.StringVar(&f.AgentFlag, "agent", "", "the acting agent `ID`, recorded on each event; default: $CKPT_AGENT")
	pf.BoolVar(&f.NoKeeper, "no-keeper", false, "with a PostgreSQL store, write directly: no keeper is used or started (as CKPT_KEEPER=off)")
}

// newRootCmd builds the command tree for the command line args.
func newRootCmd(f *cmdutil.Factory, p Program, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:           "ckpt",
		Short:         "Durable checkpoints for agent work",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addRootFlags(root, f)
	// cobra's `completion bash|zsh|fish|powershell` writes the scripts;
	// checkpoint IDs complete from the store (completeIDs).
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return cmdutil.UsageError(fmt.Errorf("%v (see %s --help)", err, cmd.CommandPath()))
	})
	// --version is `ckpt version` (versionAlias rewrites it before cobra
	// parses the line). cobra's own version flag prints through
	// text/template, and a reachable template executor makes the linker keep
	// every exported method of every type (reflect's MethodByName): 2.7 MB
	// of an 18.4 MB ckpt, paid by every process's start.
	root.Flags().BoolP("version", "v", false, "version for ckpt")
	_ = root.Flags().SetAnnotation("version", cobra.FlagSetByCobraAnnotation, []string{"true"})

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
	wanted := verbOf(args, p.Verbs)
	for _, v := range p.Verbs {
		if wanted != "" && v.Name != wanted {
			continue
		}
		c := v.Build(f)
		c.GroupID = v.Group
		if wanted != "" && !asksHelp(args) {
			// cobra visits every flag of the command (required flags,
			// flag groups), and pflag first sorts them by name for
			// help's order, which a line that does not ask for help
			// never shows.
			c.Flags().SortFlags = false
		}
		root.AddCommand(c)
	}
	if wanted == "" {
		completeIDs(f, root)
	} else {
		// A line that names a verb does not run `completion`: cobra's
		// default one, built on every Execute, is a command and four
		// subcommands with their help texts (3% of a ckpt update's
		// instructions).
		root.CompletionOptions.DisableDefaultCmd = true
	}
	return root
}
