package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
	"github.com/ckpt-dev/ckpt/internal/spool"
)

// A command that records work over a PostgreSQL store, or over a ckpt
// serve server with a token, goes through this user's keeper of the store
// when one runs (package keeper): ckpt sends its store calls over a Unix
// socket and neither hands the command to ckpt-pg nor connects to the
// database or the server. When none runs, the command runs as before
// (handed to ckpt-pg, or ckpt's own client of the server), and a keeper is
// started in the background for the next commands. A server store's
// spool stays in the command's process, around the keeper's client.

// keeperVerbs are the verbs that go through a keeper: the record verbs,
// each one append (update also a read when it sets progress) or a beat,
// and the agent clients' hooks. (An array: a map literal is built at
// every process's start.)
var keeperVerbs = [...]string{
	"start", "step", "update", "decision", "block", "unblock",
	"error", "accept", "cycle", "note", "tell", "beat",
	"done", "fail", "wait", "hook",
}

// keeperLocal reports whether cmd is `keeper status` or `keeper stop`,
// which ckpt runs itself whatever the store: they only dial the socket.
func keeperLocal(cmd *cobra.Command) bool {
	return verbName(cmd) == "keeper" && cmd.Name() != "run"
}

// verbName is the top-level verb cmd belongs to.
func verbName(cmd *cobra.Command) string {
	for ; cmd != nil && cmd.HasParent(); cmd = cmd.Parent() {
		if !cmd.Parent().HasParent() {
			return cmd.Name()
		}
	}
	return ""
}

// useKeeper routes cmd through the keeper of its store (PostgreSQL, or a
// server with a token) when one answers, and reports whether it did: the
// store's openers are then the keeper's. When none answers, it starts one
// for the next commands (unless the command is handed to ckpt-pg, which
// does that itself).
func useKeeper(f *cmdutil.Factory, cmd *cobra.Command) bool {
	if !slices.Contains(keeperVerbs[:], verbName(cmd)) {
		return false
	}
	loc, server, ok := keptLocation(f)
	if !ok {
		return false
	}
	paths := keeper.PathsFor(loc, f.Env.Var)
	c, err := keeper.Dial(paths)
	if errors.Is(err, keeper.ErrUnsafeDir) {
		if !f.HandedOver() { // else ckpt-pg, which it goes to, says it
			cmdutil.PrintWarning(f.Env.ErrOut, "not using the keeper: "+err.Error())
		}
		return false
	}
	if err != nil {
		if !f.HandedOver() {
			startKeeper(f, loc)
		}
		return false
	}
	// A lost request is retried by running the command again directly,
	// except a hook's: its payload on stdin is read already. A hook
	// reports the loss as it reports a database that failed (it never
	// breaks the agent's session), or, over a server, spools the write.
	onLost := func(e *keeper.LostError) error { return retryDirect(f, e, server) }
	if verbName(cmd) == "hook" {
		onLost = nil
	}
	first := c
	open := func(f *cmdutil.Factory, loc string) (ckpt.Store, error) {
		cl := first
		first = nil
		if cl == nil {
			var err error
			if cl, err = keeper.Dial(paths); err != nil {
				// Gone since the command started: write directly.
				lost := &keeper.LostError{Err: err}
				if onLost == nil {
					return nil, lost
				}
				return nil, onLost(lost)
			}
		}
		cl.OnLost = onLost
		if server {
			cl.Attempts = spoolAttempts
			return Spooled(f, loc, cl), nil
		}
		return cl, nil
	}
	f.Stores = maps.Clone(f.Stores)
	if server {
		f.Stores["http"], f.Stores["https"] = open, open
	} else {
		f.Stores["postgres"], f.Stores["postgresql"] = open, open
	}
	return true
}

// keptLocation is the location of f's store when a keeper may serve it:
// a PostgreSQL store, or a server store (server set) with a token (a
// keeper is one token's: the direct path warns of a missing one), with
// the keeper not turned off (--no-keeper, keeper.Enabled).
func keptLocation(f *cmdutil.Factory) (loc string, server, ok bool) {
	if f.Store != nil || f.NoKeeper {
		return "", false, false
	}
	loc = f.Location()
	server = keeper.IsServerURL(loc)
	if !isPGURL(loc) && !server || !keeper.Enabled(f.Env.Var) ||
		server && strings.TrimSpace(f.Env.Var(cmdutil.EnvToken)) == "" {
		return "", false, false
	}
	return loc, server, true
}

// spoolAttempts is the number of attempts the spool asked for on ctx, 0
// for the client's own setting: what a keeper's client sends its keeper.
func spoolAttempts(ctx context.Context) int {
	n, _ := spool.Attempts(ctx)
	return n
}

// retryDirect runs the command again, from the start, writing directly
// (ckpt-pg for a PostgreSQL store, ckpt-server for a server store: ckpt
// links neither a driver nor an HTTP client), after the keeper lost a
// request: with the lost append's idempotency key (keeper.EnvHandoffKey),
// so that it is applied once whether the keeper had applied it or not. It
// returns only on failure.
func retryDirect(f *cmdutil.Factory, lost *keeper.LostError, server bool) error {
	key := lost.Key
	if key == "" {
		key = "none" // not an append: nothing to key, but no keeper either
	}
	program := PGProgram
	if server {
		program = ServerProgram
	}
	if err := execProgram(f, program, keeper.EnvHandoffKey+"="+key); err != nil {
		return errors.Join(lost, err)
	}
	return lost
}

// startKeeper starts `keeper run` for the store at loc in the background:
// ckpt-pg's for a PostgreSQL store (ckpt-server's where it is missing),
// ckpt-server's for a server store (with the token the command has). A
// keeper that cannot start costs nothing but this try: every command
// writes directly until one runs.
func startKeeper(f *cmdutil.Factory, loc string) {
	if f.Env.Start == nil || !keeper.Supported {
		return
	}
	env := []string{cmdutil.EnvStore + "=" + loc}
	path, err := "", errNoServer
	if keeper.IsServerURL(loc) {
		env = append(env, cmdutil.EnvToken+"="+f.Env.Var(cmdutil.EnvToken))
	} else {
		path, err = findProgram(f.Env, PGProgram)
	}
	if err != nil {
		if path, err = findProgram(f.Env, ServerProgram); err != nil {
			return
		}
	}
	_ = f.Env.Start(path, []string{path, "keeper", "run"}, env)
}

// KeeperOptions are the inputs of `ckpt keeper`.
type KeeperOptions struct {
	common
	JSON  bool
	Paths keeper.Paths
	Idle  time.Duration
	// OpenStore opens the store a keeper serves (run).
	OpenStore func() (ckpt.Store, error)
	// OpenServer opens the plain client (no spool: the commands keep
	// theirs) of a server store a keeper serves; nil in ckpt, which hands
	// `keeper run` over a server store to ckpt-server (NewKeeperCmd).
	OpenServer cmdutil.Opener
	// Server is set for a server store's keeper: its store's calls take
	// the attempts each request asks for (spool.WithAttempts).
	Server bool
}

// keptRequestTimeout bounds one request of a server store's keeper: its
// client bounds each call itself (attempts of 30 s each, with backoff),
// and a command with a deadline (a hook) sends its own.
const keptRequestTimeout = 5 * time.Minute

// newKeeperCmd is ckpt's `ckpt keeper`: its keeper run serves no server
// store (ckpt-server runs that one).
func newKeeperCmd(f *cmdutil.Factory) *cobra.Command { return NewKeeperCmd(nil)(f) }

// NewKeeperCmd returns the constructor of `ckpt keeper` whose keeper of a
// server store holds the client openServer opens: ckpt-server's
// (servercli), which links the HTTP client ckpt does not.
func NewKeeperCmd(openServer cmdutil.Opener) func(*cmdutil.Factory) *cobra.Command {
	return func(f *cmdutil.Factory) *cobra.Command { return keeperCmd(f, openServer) }
}

func keeperCmd(f *cmdutil.Factory, openServer cmdutil.Opener) *cobra.Command {
	o := &KeeperOptions{common: newCommon(f), OpenStore: f.OpenRawStore, OpenServer: openServer}
	cmd := &cobra.Command{
		Use:   "keeper",
		Short: "See or stop this user's keeper of a PostgreSQL or server store",
		Long: `A command that records work (a hook among them) over a PostgreSQL store
(--store or CKPT_STORE a postgres:// URL), or over a ckpt serve server
(an https:// or http:// URL, with CKPT_TOKEN), goes through this user's
keeper of that store when one runs: a background process holding the
store's database connections, or its TLS connections to the server, open,
reached over a private Unix socket ($XDG_RUNTIME_DIR/ckpt, else
/tmp/ckpt-UID), so the command connects to neither. A server's keeper is
one token's: two tokens are two keepers. The first such command starts
it; it exits after CKPT_KEEPER_IDLE (default 5m) without a request.
CKPT_KEEPER=off (or --no-keeper) writes directly and starts none.`,
		Args: cobra.NoArgs,
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Say whether a keeper of the store runs, and what it has served",
		Args:  cobra.NoArgs,
		RunE: f.RunE(func(ctx context.Context, _ []string) error {
			if err := o.locate(f); err != nil {
				return err
			}
			return runKeeperStatus(o, false)
		}),
	}
	status.Flags().BoolVar(&o.JSON, "json", false, "print the status as JSON ({} when none runs)")
	stop := &cobra.Command{
		Use:   "stop",
		Short: "Stop the keeper of the store (it answers the requests it holds first)",
		Args:  cobra.NoArgs,
		RunE: f.RunE(func(ctx context.Context, _ []string) error {
			if err := o.locate(f); err != nil {
				return err
			}
			return runKeeperStatus(o, true)
		}),
	}
	run := &cobra.Command{
		Use:    "run",
		Short:  "Run the keeper of the store in the foreground (ckpt starts it by itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: f.RunE(func(ctx context.Context, _ []string) error {
			if err := o.locate(f); err != nil {
				return err
			}
			idle, err := keeper.Idle(f.Env.Var)
			if err != nil {
				return err
			}
			o.Idle = idle
			return runKeeper(ctx, o)
		}),
	}
	cmd.AddCommand(status, stop, run)
	return cmd
}

// locate sets the keeper's files from the store, which must be a
// PostgreSQL URL or a server's URL with a token.
func (o *KeeperOptions) locate(f *cmdutil.Factory) error {
	loc := f.Location()
	switch {
	case keeper.IsServerURL(loc):
		if strings.TrimSpace(f.Env.Var(cmdutil.EnvToken)) == "" {
			return cmdutil.Usagef("a server store's keeper is one token's: set %s to the token the commands use", cmdutil.EnvToken)
		}
		o.Server = true
		o.OpenStore = func() (ckpt.Store, error) {
			if o.OpenServer == nil {
				return nil, fmt.Errorf("this binary runs no keeper of a server store: run %s keeper run", ServerProgram)
			}
			return o.OpenServer(f, loc)
		}
	case !isPGURL(loc):
		return cmdutil.Usagef("ckpt keeper works on a PostgreSQL or server store: give its postgres:// or https:// URL with --store or CKPT_STORE")
	}
	o.Paths = keeper.PathsFor(loc, f.Env.Var)
	return nil
}

// runKeeperStatus prints the keeper's status, after asking it to stop when
// stop is set.
func runKeeperStatus(o *KeeperOptions, stop bool) error {
	c, err := keeper.Dial(o.Paths)
	if errors.Is(err, keeper.ErrNoKeeper) {
		if o.JSON {
			return cmdutil.WriteJSON(o.IO.Out, struct{}{})
		}
		_, err := fmt.Fprintln(o.IO.Out, "no keeper runs for this store")
		return err
	}
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Status()
	if stop {
		s, err = c.Stop()
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.WriteJSON(o.IO.Out, s)
	}
	verb := "runs"
	if stop {
		verb = "stops"
	}
	_, err = fmt.Fprintf(o.IO.Out, "keeper %s: pid %d, started %s, %d requests served, %d clients connected, exits after %s idle\nsocket %s\n",
		verb, s.PID, s.Started.UTC().Format(time.RFC3339), s.Requests, s.Connections, s.Idle, s.Socket)
	return err
}

// replacedExecutable returns a function that reports whether the file
// this process was started from is no longer at its path (an upgrade
// installs a new file there), nil when that cannot be told.
func replacedExecutable() func() bool {
	path, err := os.Executable()
	if err != nil {
		return nil
	}
	was, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return func() bool {
		now, err := os.Stat(path)
		return err != nil || !os.SameFile(was, now)
	}
}

// runKeeper serves the store until the keeper has been idle long enough.
// Another keeper of the store running already is not an error. What goes
// wrong is also written to the keeper's log file, beside its socket: a
// keeper ckpt started has no standard streams.
func runKeeper(ctx context.Context, o *KeeperOptions) error {
	ko := keeper.Options{Open: o.OpenStore, Paths: o.Paths, Idle: o.Idle,
		Replaced: replacedExecutable(), CheckEvery: min(10*time.Second, o.Idle/3)}
	if o.Server {
		ko.WithAttempts, ko.RequestTimeout = spool.WithAttempts, keptRequestTimeout
	}
	err := keeper.Serve(ctx, ko)
	if errors.Is(err, keeper.ErrRunning) {
		return nil
	}
	if err != nil {
		if lf, lerr := os.OpenFile(o.Paths.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); lerr == nil {
			fmt.Fprintf(lf, "%s pid %d: %v\n", time.Now().UTC().Format(time.RFC3339), os.Getpid(), err)
			lf.Close()
		}
	}
	return err
}
