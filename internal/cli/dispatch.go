package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/spf13/cobra"
)

// The commands whose libraries (the HTTP server, the dashboard, the MCP SDK,
// Prometheus, the PostgreSQL driver) would cost every ckpt process their package initialisation and
// page faults are run by a sibling binary, ckpt-server, as git runs
// git-remote-http. In ckpt they are dispatchers: ckpt replaces itself with
// ckpt-server, same arguments, environment and standard streams, so an MCP
// client that starts `ckpt mcp` talks to ckpt-server's stdio directly.

// ServerProgram is the name of the binary that runs the server commands.
const ServerProgram = "ckpt-server"

// PGProgram is the name of the binary that runs the other commands over a
// PostgreSQL store: ckpt with the driver and without the server's
// libraries (cmd/ckpt-pg), so that an agent's ckpt update over PostgreSQL
// does not start the heaviest binary. Where it is not installed,
// ckpt-server, which has every command, runs them.
const PGProgram = "ckpt-pg"

// EnvExecutable is set by ckpt for the ckpt-server it runs: ckpt's own
// path, which mcp install writes into a client's settings.
const EnvExecutable = "CKPT_EXECUTABLE"

// serverCommands are the verbs ckpt-server runs, with the one-line help
// `ckpt --help` shows for them (the real commands' Short; a test in
// servercli keeps the two the same).
var serverCommands = map[string]string{
	"serve":   "Serve the store over HTTP to agents on other machines (API, change feed, MCP, dashboard)",
	"mcp":     "Serve ckpt's tools over the Model Context Protocol on stdio",
	"token":   "Create, list and revoke the tokens of ckpt serve",
	"migrate": "Create or upgrade a PostgreSQL store's schema",
	// These two need HTTP clients (the webhooks, the issue trackers'
	// APIs), whose initialisation every hook call would pay.
	"monitor":    "Watch for agents that go quiet; act on each change (runs until Ctrl-C)",
	"checkpoint": "Run seed 001's four-step checkpoint: progress file, git snapshot, tracker comment, prompt",
}

// IsServerCommand reports whether ckpt leaves verb to ckpt-server.
func IsServerCommand(verb string) bool {
	_, ok := serverCommands[verb]
	return ok
}

// serverVerb returns the constructor of ckpt's dispatcher of verb to
// ckpt-server (whose program replaces it with the real command).
func serverVerb(verb string) func(*cmdutil.Factory) *cobra.Command {
	return func(f *cmdutil.Factory) *cobra.Command {
		cmd := &cobra.Command{
			Use:   verb,
			Short: serverCommands[verb],
			Long: serverCommands[verb] + ".\n\nckpt " + verb + " is run by " + ServerProgram +
				", installed beside ckpt; ckpt " + verb + " --help shows its options.",
			// Every argument, --help included, is ckpt-server's to read.
			DisableFlagParsing: true,
			RunE: func(*cobra.Command, []string) error {
				f.MarkReached()
				return execServer(f)
			},
		}
		// `ckpt help serve` shows the real help too.
		cmd.SetHelpFunc(func(*cobra.Command, []string) {
			f.MarkReached()
			f.Deferred = execServer(f)
		})
		return cmd
	}
}

// execServer replaces the process with ckpt-server, given the same command
// line. It returns only when that cannot be done.
func execServer(f *cmdutil.Factory) error { return execProgram(f, ServerProgram) }

// execProgram replaces the process with the sibling program name (or
// ckpt-server where ckpt-pg is missing), given the same command line. It
// returns only when that cannot be done. extra are KEY=VALUE pairs added
// to its environment.
func execProgram(f *cmdutil.Factory, name string, extra ...string) error {
	path, err := findProgram(f.Env, name)
	if name != ServerProgram && errors.Is(err, errNoServer) {
		path, err = findProgram(f.Env, ServerProgram)
	}
	if err != nil {
		return err
	}
	// A ckpt-server that is this ckpt (a link or copy installed under the
	// name) would run the dispatcher again, forever.
	self := f.Env.ExecutablePath()
	if self != "" && (f.Env.Var(EnvExecutable) == self || sameFile(path, self)) {
		return fmt.Errorf("%s is ckpt itself, not %s: reinstall the binaries with CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...@latest", path, filepath.Base(path))
	}
	if f.Env.Exec == nil {
		return fmt.Errorf("cannot start %s from here: run %s %s", path, path, strings.Join(f.Env.Args, " "))
	}
	env := extra
	if self != "" {
		env = append(env, EnvExecutable+"="+self)
	}
	if err := f.Env.Exec(path, append([]string{path}, f.Env.Args...), env); err != nil {
		return fmt.Errorf("starting %s: %w", path, err)
	}
	return nil
}

// sameFile reports whether paths a and b are the same file.
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// errNoServer says ckpt-server is not installed where ckpt looks for it.
var errNoServer = errors.New(ServerProgram + " is not installed")

// findProgram finds the sibling program name (ckpt-server, ckpt-pg):
// beside the running ckpt (they are installed together), else on $PATH;
// its error wraps errNoServer.
func findProgram(env *cmdutil.Env, name string) (string, error) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var dirs []string
	self := env.ExecutablePath()
	if self != "" {
		dirs = append(dirs, filepath.Dir(self))
	}
	dirs = append(dirs, filepath.SplitList(env.Var("PATH"))...)
	for _, dir := range dirs {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // like exec.LookPath, never the working directory
		}
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return path, nil
		}
	}
	where := "on $PATH"
	if self != "" {
		where = "beside " + self + " or on $PATH"
	}
	return "", fmt.Errorf("%w %s: ckpt serve, mcp, token, migrate, monitor and checkpoint, and every command over a PostgreSQL store, are run by it; install both binaries with CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...@latest (in a checkout: CGO_ENABLED=0 go install ./cmd/...)",
		errNoServer, where)
}

// AsCkpt is env with the executable of ckpt rather than of program
// (ckpt-server, ckpt-pg) when env's executable is program: what hooks
// install and mcp install write into a client's settings, which must go
// through ckpt. Run by ckpt's dispatcher, that is the ckpt given in
// CKPT_EXECUTABLE; run directly, the ckpt installed beside program.
func AsCkpt(env *cmdutil.Env, program string) *cmdutil.Env {
	self := env.ExecutablePath()
	base := filepath.Base(self)
	if strings.TrimSuffix(base, ".exe") != program {
		return env
	}
	e := *env
	e.Executable = env.Var(EnvExecutable)
	if e.Executable == "" {
		e.Executable = filepath.Join(filepath.Dir(self), "ckpt"+strings.TrimPrefix(base, program))
	}
	// Consumed: a dispatcher of this process (ckpt-pg's serve) must not
	// take its own ckpt for a copy of itself (execProgram's check).
	e.Getenv = func(key string) string {
		if key == EnvExecutable {
			return ""
		}
		return env.Var(key)
	}
	return &e
}
