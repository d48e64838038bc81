package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// What a command built outside this package gets from it. The commands that
// need the HTTP server, the dashboard, the MCP SDK, Prometheus or the
// PostgreSQL driver (serve, mcp, token, migrate, and any command over a
// PostgreSQL store) live in package servercli, which only cmd/ckpt-server
// links, so that the ckpt binary every hook and agent call starts stays
// small (see dispatch.go and docs/design.md, "Start-up").

// Command is a top-level command built outside this package. Given to
// MainWith (in Extensions), it replaces the verb of the same name (a
// dispatcher to ckpt-server) with the real command.
type Command struct {
	Name  string
	Build func(*Factory) *cobra.Command
}

// Factory is what the root gives a command: streams, clock, acting agent
// and the store, resolved from the persistent flags and the environment.
type Factory = factory

// Extensions are what ckpt-server adds to ckpt's command line.
type Extensions struct {
	// Commands are built in place of the dispatchers of the same names.
	Commands []Command
	// OpenPG opens the PostgreSQL store at dsn for f's command (nil: ckpt
	// hands every command over such a store to ckpt-server).
	OpenPG func(f *Factory, dsn string) (ckpt.Store, error)
}

// MainWith is Main with the extensions ext.
func MainWith(env *Env, ext Extensions) int {
	return run(extended(&factory{env: env}, ext))
}

// extended gives f the extensions ext and returns it.
func extended(f *factory, ext Extensions) *factory {
	f.commands = map[string]func(*factory) *cobra.Command{}
	for _, c := range ext.Commands {
		f.commands[c.Name] = c.Build
	}
	f.openPG = ext.OpenPG
	return f
}

// Env is the process the command line runs in.
func (f *factory) Env() *Env { return f.env }

// Now is the command's clock (CKPT_NOW when set), in UTC.
func (f *factory) Now() time.Time { return f.now() }

// RunE wraps a command's run function as its cobra RunE: errors from run
// are the command's own, not usage errors.
func (f *factory) RunE(run func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return f.runE(run)
}

// Actor is the acting agent and session recorded on every event.
func (f *factory) Actor() ckpt.Actor { return f.actor() }

// OpenStore opens the store every command uses (--store, CKPT_STORE, else
// the nearest .ckpt/); the caller closes it.
func (f *factory) OpenStore() (ckpt.Store, error) { return f.openStore() }

// OpenFileStore opens the local file store; the caller closes it.
func (f *factory) OpenFileStore() (*filestore.Store, error) { return f.openFileStore() }

// GivenStoreDir is the store named by --store or CKPT_STORE (a directory
// made absolute, or a URL), "" when neither names one.
func (f *factory) GivenStoreDir() string { return f.givenStoreDir() }

// Var reads the environment variable key; "" when unset.
func (e *Env) Var(key string) string { return e.getenv(key) }

// ExactArgs is cobra.ExactArgs with a usage error naming the arguments.
func ExactArgs(n int, names string) cobra.PositionalArgs { return exactArgs(n, names) }

// UsageError marks err as a usage error (exit code 2).
func UsageError(err error) error { return usageError{err} }

// Usagef returns a usage error (exit code 2) with a formatted message.
func Usagef(format string, args ...any) error { return usagef(format, args...) }

// WriteJSON prints v on w as indented JSON, the form of every --json.
func WriteJSON(w io.Writer, v any) error { return writeJSON(w, v) }

// PrintWarning prints msg on w as one `ckpt: warning: …` line.
func PrintWarning(w io.Writer, msg string) { printWarning(w, msg) }

// InstallCommand is how a client's settings should run ckpt: this binary's
// absolute path when own and it is an installed ckpt, else "ckpt".
func InstallCommand(e *Env, own bool) string { return installCommand(e, own) }

// Tree builds the whole command tree with the extensions ext, for tests
// and tools that read it.
func Tree(ext Extensions) *cobra.Command {
	return newRootCmd(extended(&factory{env: &Env{}}, ext), nil)
}
