package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/monitor"
	"github.com/ckpt-dev/ckpt/process"
)

// MonitorOptions are the inputs of `ckpt monitor`.
type MonitorOptions struct {
	common
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
}

// defaultMonitorEvery is how often the monitor looks when --every is not
// given: well inside the shortest interval the seeds use (5 minutes).
const defaultMonitorEvery = time.Minute

func newMonitorCmd(f *factory) *cobra.Command {
	o := &MonitorOptions{common: f.common()}
	var th thresholdFlags
	var every, abandon, actionTimeout string
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
		Args: exactArgs(0, "no arguments"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		t, err := th.parse()
		if err != nil {
			return err
		}
		o.Thresholds = t
		o.Every = defaultMonitorEvery
		if every != "" {
			if o.Every, err = parseSpan("--every", every); err != nil {
				return err
			}
		}
		if abandon != "" {
			if o.AbandonAfter, err = parseSpan("--abandon-after", abandon); err != nil {
				return err
			}
		}
		if actionTimeout != "" {
			if o.ActionTimeout, err = parseSpan("--action-timeout", actionTimeout); err != nil {
				return err
			}
		}
		ctx, stop := f.untilInterrupted(ctx)
		defer stop()
		return runMonitor(ctx, o)
	})
	th.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&every, "every", "", "look every `DURATION` (default 1m)")
	fl.StringVar(&o.Exec, "exec", "", "run shell `COMMAND` once per transition (transition JSON on stdin)")
	fl.StringVar(&o.Webhook, "webhook", "", "POST each transition as JSON to `URL`")
	fl.StringVar(&abandon, "abandon-after", "", "mark a checkpoint abandoned after it has been stale for `DURATION` (default: never)")
	fl.StringVar(&actionTimeout, "action-timeout", "", "give each --exec or --webhook call at most `DURATION`, then kill or abandon it (default 30s)")
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`")
	fl.BoolVar(&o.Once, "once", false, "look once, report, act, and exit")
	return cmd
}

// untilInterrupted returns ctx made to end when the user interrupts the
// process (Env.Interrupt), for commands that run until Ctrl-C.
func (f *factory) untilInterrupted(ctx context.Context) (context.Context, context.CancelFunc) {
	if f.env.Interrupt == nil {
		return context.WithCancel(ctx)
	}
	return f.env.Interrupt(ctx)
}

func runMonitor(ctx context.Context, o *MonitorOptions) error {
	if o.Webhook != "" {
		u, err := url.Parse(o.Webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%w: --webhook %q: give an http:// or https:// URL, e.g. https://hooks.example.com/ckpt", ckpt.ErrInvalid, o.Webhook)
		}
	}
	if strings.TrimSpace(o.Exec) == "" && o.Exec != "" {
		return fmt.Errorf("%w: --exec is blank: give a shell command, or leave the flag out", ckpt.ErrInvalid)
	}
	if !o.Once && o.Ticks == nil && o.Every <= 0 {
		return fmt.Errorf("%w: --every must be positive, e.g. --every 30s", ckpt.ErrInvalid)
	}
	return o.withStore(func(st ckpt.Store) error {
		log := &monitorLog{out: o.IO.Out, errOut: o.IO.ErrOut}
		m, err := monitor.New(monitor.Options{
			Store: st, Thresholds: o.Thresholds, AbandonAfter: o.AbandonAfter,
			Exec: o.Exec, Webhook: o.Webhook, ActionTimeout: o.ActionTimeout, Filter: ckpt.Filter{Prefix: o.Prefix},
			Now: o.Now, Log: log, Alive: process.Alive,
		})
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
			fmt.Fprintf(o.IO.ErrOut, "ckpt: monitoring every %s (%s); Ctrl-C stops\n", o.Every, monitorSettings(o))
		}
		err = m.Run(ctx, ticks)
		log.flush()
		return err
	})
}

// monitorSettings describes the thresholds and actions in force.
func monitorSettings(o *MonitorOptions) string {
	th := "warn 2x, stale 4x each checkpoint's interval"
	switch {
	case o.Thresholds.Warn > 0 && o.Thresholds.Stale > 0:
		th = fmt.Sprintf("warn after %s, stale after %s", o.Thresholds.Warn, o.Thresholds.Stale)
	case o.Thresholds.Warn > 0:
		th = fmt.Sprintf("warn after %s, stale 4x each interval", o.Thresholds.Warn)
	case o.Thresholds.Stale > 0:
		th = fmt.Sprintf("warn 2x each interval, stale after %s", o.Thresholds.Stale)
	}
	parts := []string{th}
	if o.Exec != "" {
		parts = append(parts, "running --exec")
	}
	if o.Webhook != "" {
		parts = append(parts, "posting to --webhook")
	}
	if o.AbandonAfter > 0 {
		parts = append(parts, fmt.Sprintf("abandoning after %s stale", o.AbandonAfter))
	}
	return strings.Join(parts, "; ")
}

// monitorLog sorts the monitor's log lines: transitions go to out, failed
// actions ("monitor: …") to errOut as warnings. Not safe for concurrent
// use; the monitor writes from one goroutine.
type monitorLog struct {
	out, errOut io.Writer
	partial     []byte
}

const monitorFailurePrefix = "monitor: "

func (w *monitorLog) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
}

func (w *monitorLog) line(s string) {
	if rest, ok := strings.CutPrefix(s, monitorFailurePrefix); ok {
		printWarning(w.errOut, rest)
		return
	}
	fmt.Fprintln(w.out, s)
}

// flush writes a last line that had no newline.
func (w *monitorLog) flush() {
	if len(w.partial) > 0 {
		w.line(string(w.partial))
		w.partial = nil
	}
}
