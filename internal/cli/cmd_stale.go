package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// StaleOptions are the inputs of `ckpt stale`.
type StaleOptions struct {
	common
	Thresholds ckpt.Thresholds // zero fields: 2x and 4x each checkpoint's interval
	Prefix     string
	Parent     string
	JSON       bool
	// Seed002 prints agent-checkpoints' (seed 002) check_stale_agents lines and judges by its
	// whole minutes (more than 30 warns, more than 60 is stale).
	Seed002 bool
}

// Sentinels of ckpt stale's verdict; ExitCode maps them to exit codes 10
// and 11.
var (
	errStaleFound = errors.New("stale checkpoints found")
	errWarnFound  = errors.New("checkpoints silent past the warn threshold")
)

// staleVerdict is the error ckpt stale returns when something is silent: it
// is how a script learns it (exit 10 when anything is stale, 11 when there
// are only warnings).
type staleVerdict struct{ stale, warn, live int }

func (v staleVerdict) Error() string {
	var parts []string
	if v.stale > 0 {
		parts = append(parts, render.Plural(v.stale, "checkpoint is stale", "checkpoints are stale"))
	}
	switch {
	case v.warn > 0 && v.stale > 0:
		parts = append(parts, render.Plural(v.warn, "is", "are")+" past the warn threshold")
	case v.warn > 0:
		parts = append(parts, render.Plural(v.warn, "checkpoint is", "checkpoints are")+" past the warn threshold")
	}
	return fmt.Sprintf("%s (of %s): take over a dead agent's work with ckpt takeover ID --agent NEW, or ask the agent to run ckpt beat ID",
		strings.Join(parts, " and "), render.Plural(v.live, "live checkpoint", "live checkpoints"))
}

func (v staleVerdict) Unwrap() error {
	if v.stale > 0 {
		return errStaleFound
	}
	return errWarnFound
}

func newStaleCmd(f *cmdutil.Factory) *cobra.Command {
	o := &StaleOptions{common: newCommon(f)}
	var th thresholdFlags
	cmd := &cobra.Command{
		Use:   "stale",
		Short: "List live checkpoints whose agent went quiet (exit 10 stale, 11 warn)",
		Long: `List every in_progress, waiting or blocked checkpoint whose last sign of life
(the later of its last heartbeat and its last update) is older than its warn
threshold (2x its heartbeat interval) or its stale threshold (4x), or the
thresholds given with --warn and --stale. Archived checkpoints are left out.

The exit code tells a script what was found: 0 nothing silent, 10 at least
one checkpoint stale, 11 some past the warn threshold but none stale. --json
prints the silent checkpoints as a JSON array ([] when none).

--seed002 prints seed 002's check_stale_agents lines instead, one per live
checkpoint ("✅ Secondary-A: ACTIVE (3 min ago)", "⚠️ …: WARNING (42 min) -
May be slow", "❌ …: STALE (75 min) - Likely crashed"), judged as its script
judges: whole minutes since the last checkpoint, more than 30 warns, more
than 60 is stale. The exit codes are the same.

Durations are Go durations (90s, 15m, 1h30m) or whole days (2d).`,
		Example: `  ckpt stale
  ckpt stale --warn 30m --stale 1h --json
  ckpt stale --prefix kai-7/ || echo "some agent is quiet"
  ckpt stale --prefix kai-7/ --seed002`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		t, err := th.parse()
		if err != nil {
			return err
		}
		o.Thresholds = t
		return runStale(ctx, o)
	})
	th.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`, e.g. kai-7/")
	fl.StringVar(&o.Parent, "parent", "", "only checkpoints with this parent `ID`")
	fl.BoolVar(&o.JSON, "json", false, "print the silent checkpoints as a JSON array")
	fl.BoolVar(&o.Seed002, "seed002", false, "print seed 002's ✅/⚠️/❌ line for each live checkpoint, judged in its whole minutes (>30 warn, >60 stale)")
	cmd.MarkFlagsMutuallyExclusive("json", "seed002")
	return cmd
}

func runStale(ctx context.Context, o *StaleOptions) error {
	now := o.Now()
	if o.Seed002 {
		return runStaleSeed002(ctx, o, now)
	}
	var report ckpt.StaleReport
	var damaged error
	err := o.withStore(func(st ckpt.Store) error {
		var err error
		report, err = ckpt.StaleFrom(ctx, st, ckpt.Filter{Prefix: o.Prefix, Parent: o.Parent}, now, o.Thresholds, process.Alive)
		if d := (*ckpt.DamagedError)(nil); errors.As(err, &d) {
			damaged, err = err, nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if o.JSON {
		if err := cmdutil.WriteJSON(o.IO.Out, report.Entries); err != nil {
			return err
		}
	} else if err := render.StaleTable(o.IO.Out, report, now); err != nil {
		return err
	}
	// The readable checkpoints are judged even when others are damaged: a
	// stale agent still exits 10 or 11 (the damage is a warning then);
	// otherwise the damage exits 7.
	if verdict := (staleVerdict{stale: report.Stale, warn: report.Warn, live: report.Live}); verdict.stale+verdict.warn > 0 {
		if damaged != nil {
			cmdutil.PrintWarning(o.IO.ErrOut, errorLine(damaged))
		}
		return verdict
	}
	return damaged
}

// thresholdFlags are --warn and --stale, shared by stale, monitor and status.
type thresholdFlags struct{ warn, stale string }

func (t *thresholdFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.warn, "warn", "", "silent longer than `DURATION` is warn (default: 2x each checkpoint's heartbeat interval)")
	cmd.Flags().StringVar(&t.stale, "stale", "", "silent longer than `DURATION` is stale (default: 4x each checkpoint's heartbeat interval)")
}

// parse reads the flags; an empty flag keeps the per-checkpoint default.
func (t *thresholdFlags) parse() (ckpt.Thresholds, error) {
	return request.ParseThresholds(ckpt.Thresholds{}, "--warn", t.warn, "--stale", t.stale)
}

// runStaleSeed002 is ckpt stale --seed002: the document's script's lines
// and its whole-minute verdict, with the same exit codes.
func runStaleSeed002(ctx context.Context, o *StaleOptions, now time.Time) error {
	var sums []ckpt.Summary
	err := o.withStore(func(st ckpt.Store) error {
		var err error
		sums, err = ckpt.ListAll(ctx, st, ckpt.Filter{Prefix: o.Prefix, Parent: o.Parent})
		return err
	})
	if err != nil {
		return err
	}
	stale, warn, err := render.AgentCheckLines(o.IO.Out, sums, now)
	if err != nil {
		return err
	}
	if stale+warn > 0 {
		live := 0
		for _, s := range sums {
			if s.Status.Live() && s.Archived == nil {
				live++
			}
		}
		return staleVerdict{stale: stale, warn: warn, live: live}
	}
	return nil
}
