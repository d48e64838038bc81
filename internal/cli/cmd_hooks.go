package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ckpt-dev/ckpt/internal/claude"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/gitroot"
)

// HooksOptions are the inputs of `ckpt hooks install|uninstall CLIENT`.
type HooksOptions struct {
	IO      cmdutil.IOStreams
	Client  claude.Client
	Scope   claude.Scope
	Install bool // install, else uninstall
	Print   bool // show the file install would write, write nothing
	// ProjectDir holds the project's settings (.claude/, .codex/,
	// .gemini/); HomeDir the user's.
	ProjectDir, HomeDir string
	// Command is how the client runs ckpt: "ckpt", or a path. The command
	// line's default is installCommand's.
	Command string
	// StoreFound is false when no store was found for the project; install
	// then says how to create one.
	StoreFound bool
}

// clientName is a client's name in messages ("" for none ckpt knows).
func clientName(c claude.Client) string {
	switch c {
	case claude.Claude:
		return "Claude Code"
	case claude.Codex:
		return "Codex"
	case claude.Gemini:
		return "Gemini CLI"
	}
	return ""
}

func newHooksCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "Install or remove ckpt's hooks in Claude Code, Codex or Gemini CLI",
		Long: `Install or remove the hooks that make an agent client call ckpt hook EVENT at
the right moments: a session's checkpoint is created by its first prompt or
edit and resumed when a session starts (its continuation prompt goes into the
new context), edits, subagents and stops are recorded, and a final
checkpoint is written before a compaction and when the session ends. See
docs/hooks.md.`,
	}
	cmd.AddCommand(newHooksInstallCmd(f, true), newHooksInstallCmd(f, false))
	return cmd
}

func newHooksInstallCmd(f *cmdutil.Factory, install bool) *cobra.Command {
	o := &HooksOptions{IO: f.Env.IOStreams, Install: install}
	var scope string
	use, short := "install", "Add ckpt's hooks to a client's settings (merged, idempotent)"
	long := `Add ckpt's hooks to the settings file of CLIENT (claude, codex or gemini):

  claude  --scope project  .claude/settings.json        (shared with the team)
          --scope local    .claude/settings.local.json  (yours, in this project)
          --scope user     ~/.claude/settings.json      (yours, every project)
  codex   --scope project  .codex/hooks.json    (--scope user: ~/.codex/hooks.json)
  gemini  --scope project  .gemini/settings.json (--scope user: ~/.gemini/settings.json)

The project is the git repository around the working directory, else the
working directory. The file is merged: every key and hook that is not ckpt's
stays as it was, installing twice changes nothing, and it is written
atomically. A settings file that is not valid JSON is refused, never
overwritten. --print shows the file that would be written instead.

The hooks run --command. By default that is this ckpt binary's absolute path,
so the client finds it whatever its PATH; for a binary that go run or go test
built (in the Go build cache or a temporary directory, soon deleted) it is
ckpt, found on the client's PATH.`
	if !install {
		use, short = "uninstall", "Remove ckpt's hooks from a client's settings"
		long = `Remove the hooks ckpt install added to the settings file of CLIENT at
--scope, and nothing else: the rest of the file stays as it was. A file
without ckpt's hooks is left alone.`
	}
	cmd := &cobra.Command{
		Use:   use + " CLIENT",
		Short: short,
		Long:  long,
		Example: "  ckpt hooks " + use + " claude\n  ckpt hooks " + use + " claude --scope local\n  ckpt hooks " + use + " gemini --scope user" +
			map[bool]string{true: "\n  ckpt hooks install codex --print\n  ckpt hooks install claude --command /usr/local/bin/ckpt", false: ""}[install],
		Args: cmdutil.ExactArgs(1, "one CLIENT: claude, codex or gemini"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		c, err := claude.ParseClient(args[0])
		if err != nil {
			return cmdutil.UsageError(err)
		}
		o.Client = c
		if o.Scope, err = claude.ParseScope(scope); err != nil {
			return cmdutil.UsageError(err)
		}
		o.HomeDir = f.Env.Var("HOME")
		o.ProjectDir = gitroot.Find(f.Env.WorkDir)
		if o.ProjectDir == "" {
			o.ProjectDir = f.Env.WorkDir
		}
		if dir, err := hookStoreDir(f, f.Env.WorkDir); err == nil {
			o.StoreFound = isDir(dir)
		}
		if o.Command == "" {
			o.Command = installCommand(f.Env, o.Scope != claude.ScopeProject)
		}
		return runHooks(o)
	})
	fl := cmd.Flags()
	fl.StringVar(&scope, "scope", "project", "which settings file, by `SCOPE`: project, local (Claude Code only) or user")
	if install {
		fl.BoolVar(&o.Print, "print", false, "print the settings file that would be written; write nothing")
		fl.StringVar(&o.Command, "command", "", "how the client runs ckpt: ckpt (on its PATH) or an absolute `PATH`; default: ckpt for --scope project (a file teammates share), this binary's path for local and user ("+installCommand(f.Env, true)+")")
	}
	return cmd
}

func runHooks(o *HooksOptions) error {
	name := clientName(o.Client)
	if o.Scope == claude.ScopeLocal && o.Client != claude.Claude {
		return cmdutil.Usagef("%s has no local settings file: use --scope project or --scope user", name)
	}
	if o.Print {
		data, err := claude.Print(o.Client, o.Scope, o.ProjectDir, o.HomeDir, o.Command)
		if err != nil {
			return err
		}
		return writeString(o.IO.Out, string(data))
	}
	if !o.Install {
		changed, path, err := claude.Uninstall(o.Client, o.Scope, o.ProjectDir, o.HomeDir, "")
		if err != nil {
			return err
		}
		if !changed {
			_, err = fmt.Fprintf(o.IO.Out, "no ckpt hooks for %s in %s: nothing changed\n", name, path)
			return err
		}
		_, err = fmt.Fprintf(o.IO.Out, "removed ckpt's hooks for %s from %s\n", name, path)
		return err
	}
	changed, path, err := claude.Install(o.Client, o.Scope, o.ProjectDir, o.HomeDir, o.Command)
	if err != nil {
		return err
	}
	if !changed {
		_, err = fmt.Fprintf(o.IO.Out, "ckpt's hooks for %s are already installed in %s: nothing changed\n", name, path)
		return err
	}
	if _, err := fmt.Fprintf(o.IO.Out, "installed ckpt's hooks for %s in %s\n", name, path); err != nil {
		return err
	}
	if !o.StoreFound && o.Scope != claude.ScopeUser {
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("no ckpt store in %s yet: the hooks record nothing until you run ckpt init there", o.ProjectDir))
	}
	return nil
}
