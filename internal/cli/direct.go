package cli

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// directVerbs are the verbs of an agent's hot path (its records, beats and
// hook events, each a whole process), which runDirect runs without cobra's
// Execute. An array, not a map: a map literal is built at initialisation,
// which every ckpt process pays.
var directVerbs = [...]string{
	"start", "step", "update", "beat", "hook",
	"decision", "block", "unblock", "error", "accept",
	"cycle", "note", "tell", "done", "fail", "wait",
}

// isDirectVerb reports whether verb is one of directVerbs.
func isDirectVerb(verb string) bool { return slices.Contains(directVerbs[:], verb) }

// runDirect runs the command line args when it names one of directVerbs
// (after the root's own flags only), asks for no help, and its flags and
// arguments parse and validate; ran is false, and nothing has run, for any
// other line, which cobra's Execute then runs (its help, suggestions and
// usage errors).
//
// It runs the same command, built by the same constructor under a root
// with the same persistent flags and pre-run, through the same steps as
// cobra's Command.execute (help flag, ParseFlags, ValidateArgs, the first
// persistent pre-run found, required flags and flag groups, RunE). What it
// leaves out is what Execute does for every line before it finds the
// command, none of it used on this path: the help command and the
// completion request command built and searched (Find twice), the command
// groups, the root's help text and version flag. On `ckpt update` that was
// about a tenth of the instructions of ckpt's own code (docs/design.md,
// start-up round six).
func runDirect(f *cmdutil.Factory, p Program, args []string) (err error, ran bool) {
	verb, at := verbAt(args, p.Verbs)
	if !isDirectVerb(verb) || asksHelp(args) {
		return nil, false
	}
	i := slices.IndexFunc(p.Verbs, func(v Verb) bool { return v.Name == verb })
	cmd := p.Verbs[i].Build(f)
	if cmd.HasSubCommands() || cmd.DisableFlagParsing || cmd.Deprecated != "" {
		return nil, false
	}
	cmd.Flags().SortFlags = false // see newRootCmd
	root := &cobra.Command{Use: "ckpt", SilenceUsage: true, SilenceErrors: true}
	addRootFlags(root, f)
	root.AddCommand(cmd)
	root.SetIn(f.Env.In)
	root.SetOut(f.Env.Out)
	root.SetErr(f.Env.ErrOut)
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(slices.Delete(slices.Clone(args), at, at+1)); err != nil {
		return nil, false
	}
	pos := cmd.Flags().Args()
	if help, _ := cmd.Flags().GetBool("help"); help || !cmd.Runnable() || cmd.ValidateArgs(pos) != nil {
		return nil, false
	}
	cmd.SetContext(context.Background())
	return execute(cmd, pos), true
}

// execute is the rest of cobra's Command.execute for cmd with its
// positional arguments args: the first persistent pre-run found from cmd
// up, the pre-run, the checks of required flags and flag groups, the run
// and the post-runs. (ckpt registers no cobra.OnInitialize functions and
// does not set cobra.EnableTraverseRunHooks.)
func execute(cmd *cobra.Command, args []string) error {
	for p := cmd; p != nil; p = p.Parent() {
		if p.PersistentPreRunE != nil || p.PersistentPreRun != nil {
			if err := runHook(p.PersistentPreRunE, p.PersistentPreRun, cmd, args); err != nil {
				return err
			}
			break
		}
	}
	if err := runHook(cmd.PreRunE, cmd.PreRun, cmd, args); err != nil {
		return err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return err
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return err
	}
	if err := runHook(cmd.RunE, cmd.Run, cmd, args); err != nil {
		return err
	}
	if err := runHook(cmd.PostRunE, cmd.PostRun, cmd, args); err != nil {
		return err
	}
	for p := cmd; p != nil; p = p.Parent() {
		if p.PersistentPostRunE != nil || p.PersistentPostRun != nil {
			return runHook(p.PersistentPostRunE, p.PersistentPostRun, cmd, args)
		}
	}
	return nil
}

// runHook runs e, else r, as cobra does with a command's XxxE and Xxx.
func runHook(e func(*cobra.Command, []string) error, r func(*cobra.Command, []string), cmd *cobra.Command, args []string) error {
	if e != nil {
		return e(cmd, args)
	}
	if r != nil {
		r(cmd, args)
	}
	return nil
}
