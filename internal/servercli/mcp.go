package servercli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/spf13/cobra"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/claude"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/gitroot"
	"github.com/ckpt-dev/ckpt/internal/mcp"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// MCPOptions are the inputs of `ckpt mcp`.
type MCPOptions struct {
	IO  cmdutil.IOStreams
	Now func() time.Time
	// Store opens the store; the caller closes it.
	Store func() (ckpt.Store, error)
	// Interrupt ends the server on Ctrl-C or SIGTERM (Env.Interrupt); nil:
	// it ends when the client disconnects or ctx ends.
	Interrupt func(ctx context.Context) (context.Context, context.CancelFunc)
	// HTTP is what the old --http flag was given: ckpt mcp serves stdio
	// only, and --http is refused with where MCP over HTTP is now.
	HTTP  string
	Agent string // the default actor of the events the tools write
}

func newMCPCmd(f *cmdutil.Factory) *cobra.Command {
	o := &MCPOptions{IO: f.Env.IOStreams, Now: f.Now, Store: f.OpenStore, Interrupt: f.Env.Interrupt}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve ckpt's tools over the Model Context Protocol on stdio",
		Long: `Serve the store's checkpoints over the Model Context Protocol, so an agent
records and reads its work with tool calls: ckpt_start, ckpt_update,
ckpt_step, ckpt_decision, ckpt_blocker, ckpt_heartbeat, ckpt_show,
ckpt_resume (the continuation prompt), ckpt_list and ckpt_stale, and the
resources ckpt://checkpoint/{id} and ckpt://checkpoint/{id}/prompt.
See docs/mcp.md.

The server speaks on stdin and stdout, as a client that starts it expects;
its logs go to stderr only. MCP over HTTP is served by ckpt serve at /mcp,
behind its tokens (docs/mcp.md): ckpt mcp has no --http of its own, since
an MCP server without authentication let anyone who could reach it rewrite
any checkpoint.

The store is the one every ckpt command uses (--store, CKPT_STORE, else the
nearest .ckpt/). Over a PostgreSQL store, or a server store with
CKPT_TOKEN, the server goes through this user's keeper of the store (see
ckpt keeper), starting one when none runs; --no-keeper or CKPT_KEEPER=off
opens the store directly. Events are recorded as --agent (or $CKPT_AGENT), else "mcp",
unless a tool call names its agent.`,
		Example: `  ckpt mcp
  ckpt mcp install claude
  claude mcp add ckpt -- ckpt mcp`,
		Args: cmdutil.ExactArgs(0, "no arguments (did you mean ckpt mcp install claude?)"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.Agent = f.Actor().Agent
		// A PostgreSQL or server store goes through this user's keeper of
		// it, as the record commands do: one pool for every agent's MCP
		// server on the machine (keeper.Session says what a lost keeper
		// costs a call).
		cli.KeepSession(f, openKeptRemote)
		return runMCP(ctx, o)
	})
	// --http and --allow-remote are gone; kept hidden so that an old
	// command line gets the way to MCP over HTTP rather than "unknown flag".
	fl := cmd.Flags()
	fl.StringVar(&o.HTTP, "http", "", "gone: MCP over HTTP is ckpt serve's /mcp")
	var allowRemote bool
	fl.BoolVar(&allowRemote, "allow-remote", false, "gone with --http")
	fl.MarkHidden("http")
	fl.MarkHidden("allow-remote")
	cmd.AddCommand(newMCPInstallCmd(f, true), newMCPInstallCmd(f, false))
	return cmd
}

func runMCP(ctx context.Context, o *MCPOptions) error {
	if o.HTTP != "" {
		return errMCPHTTP
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	logger := slog.New(slog.NewTextHandler(o.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcp.NewServer(st, mcp.Options{Now: o.Now, Version: serverVersion(), Agent: o.Agent, Logger: logger})
	if o.Interrupt != nil {
		var stop context.CancelFunc
		ctx, stop = o.Interrupt(ctx)
		defer stop()
	}
	err = srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(o.IO.In), Writer: nopWriteCloser{o.IO.Out}})
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil // the client hung up, or Ctrl-C
	}
	return fmt.Errorf("mcp over stdio: %w", err)
}

// errMCPHTTP answers the old ckpt mcp --http.
var errMCPHTTP = cmdutil.Usagef("ckpt mcp --http is gone: MCP over HTTP is served by ckpt serve at /mcp, behind its tokens (an MCP server without authentication let anyone who could reach it rewrite any checkpoint). Run ckpt serve (e.g. ckpt serve --addr 127.0.0.1:8470), create a token (ckpt token create --scope write), and point the client at http://127.0.0.1:8470/mcp with the header Authorization: Bearer TOKEN; see docs/mcp.md")

// isLoopback reports a host that only this machine can reach: localhost or
// a loopback IP.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// nopWriteCloser is stdout for the stdio transport: the server must not
// close the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// MCPInstallOptions are the inputs of `ckpt mcp install|uninstall claude`.
type MCPInstallOptions struct {
	IO         cmdutil.IOStreams
	Install    bool
	Print      bool   // print the `claude mcp add` line instead of writing
	Scope      string // project (.mcp.json), local or user (Claude Code's own files)
	ProjectDir string
	Command    string // empty: installCommand's default for the scope
	// Env is where the default command comes from (the running binary).
	Env *cmdutil.Env
}

func newMCPInstallCmd(f *cmdutil.Factory, install bool) *cobra.Command {
	o := &MCPInstallOptions{IO: f.Env.IOStreams, Install: install, Env: f.Env}
	use, short := "install", "Register ckpt's MCP server with Claude Code (.mcp.json)"
	long := `Register ckpt's MCP server with Claude Code for this project: add
{"command": "ckpt", "args": ["mcp"]} as mcpServers.ckpt in the project's
.mcp.json (the git repository around the working directory, else the working
directory), merged with the servers already there and written atomically;
installing twice changes nothing. Claude Code asks once before it uses a
project's servers.

The command is --command: by default this ckpt binary's absolute path, or
ckpt (found on Claude Code's PATH) for a binary that go run or go test built.

--print prints the equivalent claude mcp add command instead. Claude Code
keeps the local and user scopes in its own ~/.claude.json, which ckpt does
not write: --scope local or user prints the command to run.`
	if !install {
		use, short = "uninstall", "Remove ckpt's MCP server from the project's .mcp.json"
		long = `Remove mcpServers.ckpt from the project's .mcp.json, keeping every other
server and key. A file without it is left alone.`
	}
	cmd := &cobra.Command{
		Use:     use + " claude",
		Short:   short,
		Long:    long,
		Example: "  ckpt mcp " + use + " claude" + map[bool]string{true: "\n  ckpt mcp install claude --print\n  ckpt mcp install claude --scope user", false: ""}[install],
		Args:    cmdutil.ExactArgs(1, "the client: claude"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		if c := strings.ToLower(args[0]); c != "claude" && c != "claude-code" {
			return cmdutil.Usagef("ckpt mcp %s knows claude only; for Codex, Gemini CLI and other clients see docs/mcp.md (add command ckpt, args [mcp] to their MCP servers)", use)
		}
		o.ProjectDir = gitroot.Find(f.Env.WorkDir)
		if o.ProjectDir == "" {
			o.ProjectDir = f.Env.WorkDir
		}
		return runMCPInstall(o)
	})
	if install {
		fl := cmd.Flags()
		fl.BoolVar(&o.Print, "print", false, "print the claude mcp add command instead of writing .mcp.json")
		fl.StringVar(&o.Scope, "scope", "project", "`SCOPE`: project (.mcp.json, written by ckpt), local or user (printed as a claude mcp add command)")
		fl.StringVar(&o.Command, "command", "", "how Claude Code runs ckpt: ckpt (on its PATH) or an absolute `PATH`; default: ckpt in the project's shared .mcp.json, this binary's path for --print, local and user ("+claude.InstallCommand(f.Env.ExecutablePath(), f.Env.Var, true)+")")
	}
	return cmd
}

func runMCPInstall(o *MCPInstallOptions) error {
	if o.Command == "" {
		o.Command = claude.InstallCommand(o.Env.ExecutablePath(), o.Env.Var, o.Print || o.Scope != "project")
	}
	if !o.Install {
		changed, path, err := mcp.UninstallClaudeProject(o.ProjectDir)
		if err != nil {
			return err
		}
		if !changed {
			_, err = fmt.Fprintf(o.IO.Out, "no ckpt server in %s: nothing changed\n", path)
			return err
		}
		_, err = fmt.Fprintf(o.IO.Out, "removed the ckpt MCP server from %s\n", path)
		return err
	}
	switch o.Scope {
	case "project", "local", "user":
	default:
		return cmdutil.Usagef("unknown scope %q: use project, local or user", o.Scope)
	}
	if o.Print || o.Scope != "project" {
		scope := o.Scope
		if o.Print && scope == "project" {
			scope = "" // claude mcp add's own default, local: this project, you only
		}
		_, err := fmt.Fprintln(o.IO.Out, render.ShellArgs(mcp.ClaudeAddArgs(scope, o.Command)))
		if err == nil && !o.Print {
			cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("Claude Code keeps %s-scope MCP servers in ~/.claude.json, which ckpt does not write: run the command above", o.Scope))
		}
		return err
	}
	changed, path, err := mcp.InstallClaudeProject(o.ProjectDir, o.Command)
	if err != nil {
		return err
	}
	if !changed {
		_, err = fmt.Fprintf(o.IO.Out, "the ckpt MCP server is already in %s: nothing changed\n", path)
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, "added the ckpt MCP server to %s (Claude Code asks once before using it; /mcp shows it)\n", path)
	return err
}
