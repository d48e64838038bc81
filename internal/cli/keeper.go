package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// A command over a PostgreSQL store that records work goes through this
// user's keeper of the store when one runs (package keeper): ckpt sends
// its store calls over a Unix socket and neither hands the command to
// ckpt-pg nor connects to the database. When none runs, the command is
// handed over as before, and ckpt-pg, writing directly, starts one in the
// background for the next commands.

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

// useKeeper routes cmd through the keeper of its PostgreSQL store when one
// answers, and reports whether it did: the store's openers are then the
// keeper's. When none answers and this binary writes to PostgreSQL itself
// (ckpt-pg), it starts one for the next commands.
func useKeeper(f *cmdutil.Factory, cmd *cobra.Command) bool {
	if f.Store != nil || f.NoKeeper || !slices.Contains(keeperVerbs[:], verbName(cmd)) {
		return false
	}
	loc := f.Location()
	if !isPGURL(loc) || !keeper.Enabled(f.Env.Var) {
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
	// breaks the agent's session).
	onLost := func(e *keeper.LostError) error { return retryDirect(f, e) }
	if verbName(cmd) == "hook" {
		onLost = nil
	}
	first := c
	open := func(*cmdutil.Factory, string) (ckpt.Store, error) {
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
		return cl, nil
	}
	f.Stores = maps.Clone(f.Stores)
	f.Stores["postgres"], f.Stores["postgresql"] = open, open
	return true
}

// retryDirect runs the command again, from the start, by ckpt-pg writing
// directly, after the keeper lost a request: with the lost append's
// idempotency key (keeper.EnvHandoffKey), so that it is applied once
// whether the keeper had applied it or not. It returns only on failure.
func retryDirect(f *cmdutil.Factory, lost *keeper.LostError) error {
	key := lost.Key
	if key == "" {
		key = "none" // not an append: nothing to key, but no keeper either
	}
	if err := execProgram(f, PGProgram, keeper.EnvHandoffKey+"="+key); err != nil {
		return errors.Join(lost, err)
	}
	return lost
}

// startKeeper starts `ckpt-pg keeper run` for the store at loc in the
// background. A keeper that cannot start costs nothing but this try:
// every command writes directly until one runs.
func startKeeper(f *cmdutil.Factory, loc string) {
	if f.Env.Start == nil || !keeper.Supported {
		return
	}
	path, err := findProgram(f.Env, PGProgram)
	if err != nil {
		path, err = findProgram(f.Env, ServerProgram)
	}
	if err != nil {
		return
	}
	_ = f.Env.Start(path, []string{path, "keeper", "run"}, []string{cmdutil.EnvStore + "=" + loc})
}

// KeeperOptions are the inputs of `ckpt keeper`.
type KeeperOptions struct {
	common
	JSON  bool
	Paths keeper.Paths
	Idle  time.Duration
	// OpenStore opens the store a keeper serves (run).
	OpenStore func() (ckpt.Store, error)
}

func newKeeperCmd(f *cmdutil.Factory) *cobra.Command {
	o := &KeeperOptions{common: newCommon(f), OpenStore: f.OpenRawStore}
	cmd := &cobra.Command{
		Use:   "keeper",
		Short: "See or stop this user's keeper of a PostgreSQL store",
		Long: `A command that records work over a PostgreSQL store (--store or CKPT_STORE a
postgres:// URL), a hook among them, goes through this user's keeper of that store when one
runs: a background process holding the store's connections open, reached
over a private Unix socket ($XDG_RUNTIME_DIR/ckpt, else /tmp/ckpt-UID), so
the command starts no database connection. The first such command starts
it; it exits after CKPT_KEEPER_IDLE (default 5m) without a request.
CKPT_KEEPER=off writes directly and starts none.`,
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
// PostgreSQL URL.
func (o *KeeperOptions) locate(f *cmdutil.Factory) error {
	loc := f.Location()
	if !isPGURL(loc) {
		return cmdutil.Usagef("ckpt keeper works on a PostgreSQL store: give its postgres:// URL with --store or CKPT_STORE")
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
	_, err = fmt.Fprintf(o.IO.Out, "keeper %s: pid %d, started %s, %d requests served, exits after %s idle\nsocket %s\n",
		verb, s.PID, s.Started.UTC().Format(time.RFC3339), s.Requests, s.Idle, s.Socket)
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
	err := keeper.Serve(ctx, keeper.Options{Open: o.OpenStore, Paths: o.Paths, Idle: o.Idle,
		Replaced: replacedExecutable(), CheckEvery: min(10*time.Second, o.Idle/3)})
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
