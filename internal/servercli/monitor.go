package servercli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/internal/monitor"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// MonitorOptions are the inputs of `ckpt monitor`.
type MonitorOptions struct {
	IO  cmdutil.IOStreams
	Now func() time.Time
	// Store opens the store; the monitor closes it.
	Store        func() (ckpt.Store, error)
	Every        time.Duration // between ticks; ignored with Once or Ticks
	Exec         string        // shell command run once per transition
	Webhook      string        // URL that receives each transition as JSON
	AbandonAfter time.Duration // stale this long → abandoned; 0: never
	// ActionTimeout bounds each --exec and --webhook call; 0: the
	// monitor's default (30s).
	ActionTimeout time.Duration
	Thresholds    ckpt.Thresholds
	Prefix        string
	Once          bool // one tick, then return
	// Ticks, when set, drives the loop instead of a ticker every Every.
	Ticks <-chan time.Time
	// Mirrors gives the store under any mirrors and the mirror list of the
	// store the monitor watches; the list is read again at every look, so
	// a mirror added while the monitor runs gets its escalations. nil: the
	// mirrors the store was opened with.
	Mirrors func(st ckpt.Store) (ckpt.Store, mirror.List)
}

// defaultMonitorEvery is how often the monitor looks when --every is not
// given: well inside the shortest interval the seeds use (5 minutes).
const defaultMonitorEvery = time.Minute

func newMonitorCmd(f *cmdutil.Factory) *cobra.Command {
	o := &MonitorOptions{IO: f.Env.IOStreams, Now: f.Now, Store: f.OpenStore}
	o.Mirrors = func(st ckpt.Store) (ckpt.Store, mirror.List) {
		if ms, ok := st.(*mirror.Store); ok {
			return ms.Unwrap(), ms.MirrorList()
		}
		return st, cli.MirrorList(f, st)
	}
	var warn, stale, every, abandon, actionTimeout string
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Watch for agents that go quiet; act on each change (runs until Ctrl-C)",
		Long: `Watch every live checkpoint and report each presence transition once, when it
happens (working → waiting → working, working → warn → stale → working, → dead
when the agent's process is gone from this host, → ended), not at every look:
one line per transition on stdout; busy counts as working. Thresholds are those
of ckpt stale. The store is listed once; then writes come from its change
feed, and every --every the monitor looks only at what time can change (the
checkpoints silent since the last look, and the few it reported not working).

For each transition, --exec runs a shell command (sh -c) with the transition
as JSON on its standard input and CKPT_ID, CKPT_AGENT, CKPT_FROM and CKPT_TO
in its environment; --webhook POSTs the same JSON to a URL. A failed action is
reported on stderr and the watch goes on. Each action gets --action-timeout
(default 30s): a command still running then is killed with its whole process
group, a webhook that has not answered is given up. --abandon-after D marks a
checkpoint abandoned once it has been stale for D more (only if nobody wrote
to it meanwhile).

The first look reports every checkpoint that is not live already. Ctrl-C
(SIGINT) or SIGTERM stops the monitor cleanly, with exit code 0. --once looks
once and exits, for cron.`,
		Example: `  ckpt monitor
  ckpt monitor --every 30s --warn 10m --stale 30m --exec 'notify-send "ckpt: $CKPT_ID is $CKPT_TO"'
  ckpt monitor --webhook https://hooks.example.com/ckpt --abandon-after 2h
  ckpt monitor --once`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		// An empty flag keeps each checkpoint's default, as in ckpt stale.
		t, err := request.ParseThresholds(ckpt.Thresholds{}, "--warn", warn, "--stale", stale)
		if err != nil {
			return err
		}
		o.Thresholds = t
		o.Every = defaultMonitorEvery
		if every != "" {
			if o.Every, err = request.ParseSpan("--every", every); err != nil {
				return err
			}
		}
		if abandon != "" {
			if o.AbandonAfter, err = request.ParseSpan("--abandon-after", abandon); err != nil {
				return err
			}
		}
		if actionTimeout != "" {
			if o.ActionTimeout, err = request.ParseSpan("--action-timeout", actionTimeout); err != nil {
				return err
			}
		}
		ctx, stop := cli.UntilInterrupted(f, ctx)
		defer stop()
		return runMonitor(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&warn, "warn", "", "silent longer than `DURATION` is warn (default: 2x each checkpoint's heartbeat interval)")
	fl.StringVar(&stale, "stale", "", "silent longer than `DURATION` is stale (default: 4x each checkpoint's heartbeat interval)")
	fl.StringVar(&every, "every", "", "look every `DURATION` (default 1m)")
	fl.StringVar(&o.Exec, "exec", "", "run shell `COMMAND` once per transition (transition JSON on stdin)")
	fl.StringVar(&o.Webhook, "webhook", "", "POST each transition as JSON to `URL`")
	fl.StringVar(&abandon, "abandon-after", "", "mark a checkpoint abandoned after it has been stale for `DURATION` (default: never)")
	fl.StringVar(&actionTimeout, "action-timeout", "", "give each --exec or --webhook call at most `DURATION`, then kill or abandon it (default 30s)")
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`")
	fl.BoolVar(&o.Once, "once", false, "look once, report, act, and exit")
	return cmd
}

func runMonitor(ctx context.Context, o *MonitorOptions) error {
	if !o.Once && o.Ticks == nil && o.Every <= 0 {
		return fmt.Errorf("%w: --every must be positive, e.g. --every 30s", ckpt.ErrInvalid)
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	err = watch(ctx, o, st)
	if cerr := st.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the store: %w", cerr)
	}
	return err
}

// watch runs the monitor over st until ctx ends (after one look with
// o.Once).
func watch(ctx context.Context, o *MonitorOptions, st ckpt.Store) error {
	opts := monitor.Options{
		Store: st, Thresholds: o.Thresholds, AbandonAfter: o.AbandonAfter,
		Exec: o.Exec, Webhook: o.Webhook, ActionTimeout: o.ActionTimeout, Filter: ckpt.Filter{Prefix: o.Prefix},
		Now: o.Now, Log: o.IO.Out, Warn: func(msg string) { cmdutil.PrintWarning(o.IO.ErrOut, msg) }, Alive: process.Alive,
	}
	opts.Escalate = o.escalator(st, opts.Warn)
	m, err := monitor.New(opts)
	if err != nil {
		return err
	}
	ticks := o.Ticks
	switch {
	case o.Once:
		closed := make(chan time.Time)
		close(closed)
		ticks = closed
	case ticks == nil:
		t := time.NewTicker(o.Every)
		defer t.Stop()
		ticks = t.C
		fmt.Fprintf(o.IO.ErrOut, "ckpt: monitoring every %s (%s); Ctrl-C stops\n", o.Every, opts.Describe())
	}
	return m.Run(ctx, ticks)
}

// escalator is the seed escalations of each look (mirror.Store.Escalate):
// over the mirror list read again at every look when o.Mirrors is set, so
// a mirror added while the monitor runs is escalated at its next look,
// else over the mirrors st was opened with; nil when there are none. A
// list that cannot be read is warned about once per error.
func (o *MonitorOptions) escalator(st ckpt.Store, warn func(string)) func(context.Context, time.Time) {
	if o.Mirrors == nil {
		if ms, ok := st.(*mirror.Store); ok {
			return func(ctx context.Context, now time.Time) { ms.Escalate(ctx, now) }
		}
		return nil
	}
	base, list := o.Mirrors(st)
	said := ""
	return func(ctx context.Context, now time.Time) {
		// The look's time names the backups, as it judges the silences.
		ms, err := mirror.Open(base, list, cli.MirrorLibOptions(o.IO.ErrOut, func() time.Time { return now }))
		if err != nil {
			if err.Error() != said {
				said = err.Error()
				warn("seed escalations not written: " + said)
			}
			return
		}
		said = ""
		ms.Escalate(ctx, now)
	}
}
