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
func execServer(f *cmdutil.Factory) error {
	path, err := findServer(f.Env)
	if err != nil {
		return err
	}
	// A ckpt-server that is this ckpt (a link or copy installed under the
	// name) would run the dispatcher again, forever.
	if f.Env.Executable != "" && (f.Env.Var(EnvExecutable) == f.Env.Executable || sameFile(path, f.Env.Executable)) {
		return fmt.Errorf("%s is ckpt itself, not ckpt-server: reinstall both binaries with CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...@latest", path)
	}
	if f.Env.Exec == nil {
		return fmt.Errorf("cannot start %s from here: run %s %s", path, path, strings.Join(f.Env.Args, " "))
	}
	var env []string
	if f.Env.Executable != "" {
		env = append(env, EnvExecutable+"="+f.Env.Executable)
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

// findServer finds ckpt-server: beside the running ckpt (the two are
// installed together), else on $PATH.
func findServer(env *cmdutil.Env) (string, error) {
	name := ServerProgram
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var dirs []string
	if env.Executable != "" {
		dirs = append(dirs, filepath.Dir(env.Executable))
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
	if env.Executable != "" {
		where = "beside " + env.Executable + " or on $PATH"
	}
	return "", fmt.Errorf("%w %s: ckpt serve, mcp, token and migrate, and every command over a PostgreSQL store, are run by it; install both binaries with CGO_ENABLED=0 go install github.com/ckpt-dev/ckpt/cmd/...@latest (in a checkout: CGO_ENABLED=0 go install ./cmd/...)",
		errNoServer, where)
}
