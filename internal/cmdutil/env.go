package cmdutil

import (
	"context"
	"io"
	"time"
)

// IOStreams are a command's standard input, output and error.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Env is everything a command line needs from its process. Nothing in the
// command line touches the process otherwise, so every command runs the
// same way in a test as in the real binary; System builds the Env of the
// running process.
type Env struct {
	IOStreams
	// Getenv reads an environment variable; nil reads none.
	Getenv func(string) string
	// WorkDir is the directory relative paths and store discovery start
	// from. It must be absolute.
	WorkDir string
	// Now is the clock; nil means time.Now. CKPT_NOW overrides it.
	Now func() time.Time
	// Args are the command-line arguments without the program name.
	Args []string
	// Executable is the absolute path of the running ckpt binary, symbolic
	// links resolved; "" when it is not known or not looked up yet: read
	// it with ExecutablePath. `hooks install` and `mcp install` write it
	// into a client's settings when it is an installed ckpt.
	Executable string
	// LookupExecutable finds Executable the first time ExecutablePath is
	// asked while it is ""; nil: it stays unknown.
	LookupExecutable func() string
	// Interrupt returns a context derived from ctx that ends when the user
	// interrupts the process (Ctrl-C, SIGTERM), and the function that stops
	// watching for that. Commands that run until interrupted (monitor,
	// status --watch) run under it and stop cleanly with exit code 0; nil
	// means they stop only when their own context ends.
	Interrupt func(ctx context.Context) (context.Context, context.CancelFunc)
	// LookupUser names the account the process runs as, for an event's
	// actor when neither an agent nor $USER/$LOGNAME names anyone; nil
	// names no one.
	LookupUser func() string
	// Exec replaces the process with the program at path, given args
	// (args[0] included), the process's environment with the KEY=VALUE
	// pairs of env added, and its standard streams; it returns only on
	// failure. ckpt runs its server commands this way; nil: it cannot.
	Exec func(path string, args, env []string) error
	// Start starts the program at path in the background, detached from
	// the command (its own session, no standard streams), given args
	// (args[0] included) and the process's environment with env added;
	// ckpt starts a store's keeper this way. nil: it cannot.
	Start func(path string, args, env []string) error
	// Output runs the program at path as a child process, given args
	// (args[0] included), the process's environment with env added and no
	// standard input, and waits for it: its standard output, and on failure
	// an error ending with the last line of its standard error. The child
	// is killed when ctx ends. The hooks run their tracker step in
	// ckpt-server this way. nil: it cannot.
	Output func(ctx context.Context, path string, args, env []string) ([]byte, error)
}

// ExecutablePath is Executable, found by LookupExecutable the first time
// it is asked for when Executable is "". Most command lines never ask
// (only dispatching to a sibling program, starting a keeper and the
// install commands do), and the lookup, a readlink of /proc/self/exe and a
// stat per component of the path, cost every process about 60 µs of CPU
// when System did it up front (docs/design.md, "Issue 22, round ten"). It
// fills Executable, so it is not safe for concurrent first use.
func (e *Env) ExecutablePath() string {
	if e.Executable == "" && e.LookupExecutable != nil {
		e.Executable = e.LookupExecutable()
		e.LookupExecutable = nil
	}
	return e.Executable
}

// Var reads the environment variable key; "" when unset.
func (e *Env) Var(key string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(key)
}

// Environment variables the factory reads.
const (
	EnvStore   = "CKPT_STORE"   // the store directory, or a server's URL, like --store
	EnvToken   = "CKPT_TOKEN"   // the bearer token for a server store (https://…)
	EnvAgent   = "CKPT_AGENT"   // the acting agent, like --agent
	EnvSession = "CKPT_SESSION" // the acting session ID
	EnvNow     = "CKPT_NOW"     // a fixed clock, RFC 3339, for scripts and tests
)
