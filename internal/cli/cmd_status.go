package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/follow"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// Views of checkpoints for people and for the seeds' files: `ckpt status`
// (the table of every checkpoint, sitebuilder's (seed 003) STATUS.md) and `ckpt progress`
// (ccc's (seed 001) progress file).

// StatusViewOptions are the inputs of `ckpt status`.
type StatusViewOptions struct {
	common
	All        bool // include archived checkpoints
	Prefix     string
	Parent     string
	Thresholds ckpt.Thresholds
	Markdown   bool   // seed 003's STATUS.md instead of the table
	JSON       bool   // one JSON array of rows instead of the table
	OutFile    string // write the view to this file atomically; "" for stdout
	Watch      bool   // redraw until ctx ends
	Every      time.Duration
	// Ticks, when set, drives --watch's slow redraw (presence) instead of
	// a ticker every Every; closing it ends the watch.
	Ticks <-chan time.Time
	// Terminal makes --watch redraw in place, only the lines that changed.
	Terminal bool

	screen *render.Screen // --watch's frames
}

// defaultWatchEvery is how often --watch re-derives presence without
// --every. Writes redraw at once through the change feed; presence also
// moves without writes (a process dies, a threshold passes), which a few
// seconds' delay is fine for.
const defaultWatchEvery = 5 * time.Second

func newStatusViewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &StatusViewOptions{common: newCommon(f)}
	var th thresholdFlags
	var every, out string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "The table of all checkpoints; --md writes seed 003's STATUS.md",
		Long: `Show every checkpoint at a glance: agent, task, status, a progress bar with
its percent, the current step, when it was last seen and its liveness (live,
warn, stale; "-" for work that cannot go stale). A checkpoint marked done
whose acceptance criteria are not all met shows as "done (partial)".
Archived checkpoints are left out unless --all.

--md renders seed 003's progress/STATUS.md instead (Overall Progress, the
Active Checkpoints table, Partially Complete); --json one JSON object per
checkpoint in an array. --out FILE writes the view to FILE atomically (a
reader never sees half a file) instead of stdout.

--watch keeps the view up to date until Ctrl-C: it redraws on each change
in the store's change feed, and every --every (default 5s) to follow
presence, which moves without writes (a process dies, a threshold
passes). On a terminal only the lines that changed are rewritten; with
--out it rewrites the file each time.`,
		Example: `  ckpt status
  ckpt status --md --out progress/STATUS.md
  ckpt status --watch --every 5s
  ckpt status --json --prefix kai-7/`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		t, err := th.parse()
		if err != nil {
			return err
		}
		o.Thresholds = t
		o.Every = defaultWatchEvery
		if every != "" {
			if !o.Watch {
				return cmdutil.Usagef("--every sets how often --watch redraws: add --watch, or leave --every out")
			}
			if o.Every, err = request.ParseSpan("--every", every); err != nil {
				return err
			}
		}
		o.OutFile = absPath(f.Env.WorkDir, out)
		o.Terminal = isTerminal(o.IO.Out)
		if !o.Watch {
			err := runStatusView(ctx, o)
			noteSpool(f, o.IO.ErrOut) // after the listing, which delivers what it can
			return err
		}
		ctx, stop := untilInterrupted(f, ctx)
		defer stop()
		return runStatusView(ctx, o)
	})
	th.add(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&o.All, "all", false, "include archived checkpoints")
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`, e.g. kai-7/")
	fl.StringVar(&o.Parent, "parent", "", "only checkpoints with this parent `ID`")
	fl.BoolVar(&o.Markdown, "md", false, "render seed 003's STATUS.md (Markdown)")
	fl.BoolVar(&o.JSON, "json", false, "print a JSON array with one object per checkpoint")
	fl.StringVar(&out, "out", "", "write the view to `FILE` atomically instead of stdout")
	fl.BoolVar(&o.Watch, "watch", false, "redraw on each change until Ctrl-C")
	fl.StringVar(&every, "every", "", "with --watch, also redraw every `DURATION` to follow presence (default 5s)")
	return cmd
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func runStatusView(ctx context.Context, o *StatusViewOptions) error {
	if o.Markdown && o.JSON {
		return cmdutil.Usagef("--md and --json are two formats: give one of them")
	}
	if o.Watch && o.Ticks == nil && o.Every <= 0 {
		return fmt.Errorf("%w: --every must be positive, e.g. --every 5s", ckpt.ErrInvalid)
	}
	return o.withStore(func(st ckpt.Store) error {
		if o.Watch {
			return o.watch(ctx, st)
		}
		damaged, err := o.draw(ctx, st)
		if err != nil {
			return err
		}
		return damaged
	})
}

// draw writes the view once, with a warning under it naming the
// checkpoints that could not be read, and returns those (damaged) apart
// from an error that kept the view from being drawn.
func (o *StatusViewOptions) draw(ctx context.Context, st ckpt.Store) (damaged, err error) {
	view, damaged, err := o.view(ctx, st)
	if err != nil {
		return nil, err
	}
	if err := o.emit(view); err != nil {
		return nil, err
	}
	if damaged != nil {
		cmdutil.PrintWarning(o.IO.ErrOut, errorLine(damaged))
	}
	return damaged, nil
}

// watch draws the view, then again after each change in the store's feed
// and every Every (or on Ticks), until ctx ends or Ticks is closed
// (follow.Redraw).
func (o *StatusViewOptions) watch(ctx context.Context, st ckpt.Store) error {
	ticks := o.Ticks
	if ticks == nil {
		t := time.NewTicker(o.Every)
		defer t.Stop()
		ticks = t.C
	}
	return follow.Redraw(ctx, st, ticks, func(ctx context.Context) error {
		_, err := o.draw(ctx, st) // damage is warned under each table; the watch goes on
		return err
	})
}

// view renders the checkpoints as they are now, in the chosen format; see
// listReadable for damaged.
func (o *StatusViewOptions) view(ctx context.Context, st ckpt.Store) (_ []byte, damaged, err error) {
	f := ckpt.Filter{IncludeArchived: o.All, Prefix: o.Prefix, Parent: o.Parent}
	now := o.Now()
	var b bytes.Buffer
	if o.JSON {
		list, damaged, err := listSummaries(ctx, st, f)
		if err != nil {
			return nil, nil, err
		}
		ckpt.RereadDeadSummaries(ctx, st, list, now, o.Thresholds, process.Alive)
		if err := render.StatusJSON(&b, list, now, o.Thresholds, process.Alive); err != nil {
			return nil, nil, err
		}
		return b.Bytes(), damaged, nil
	}
	// The table and STATUS.md show the current step by the steps'
	// rule and the unmet criteria: they need the states.
	list, damaged, err := listReadable(ctx, st, f)
	if err != nil {
		return nil, nil, err
	}
	ckpt.RereadDead(ctx, st, list, now, o.Thresholds, process.Alive)
	if o.Markdown {
		b.WriteString(render.StatusMarkdown(list, now, o.Thresholds, process.Alive))
	} else if err := render.StatusTable(&b, list, now, o.Thresholds, process.Alive); err != nil {
		return nil, nil, err
	}
	return b.Bytes(), damaged, nil
}

// emit writes one rendering of the view: to the file, or to stdout. Under
// --watch each frame starts with a header line and goes to a
// render.Screen.
func (o *StatusViewOptions) emit(view []byte) error {
	if o.OutFile != "" {
		if err := atomicfile.WriteFile(o.OutFile, view, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", o.OutFile, err)
		}
		if o.Watch {
			_, err := fmt.Fprintf(o.IO.ErrOut, "ckpt: wrote %s at %s\n", o.OutFile, o.Now().Format(render.TimeLayout))
			return err
		}
		return nil
	}
	body := string(view)
	if !o.JSON {
		body = render.Terminal(body)
	}
	if !o.Watch {
		return writeString(o.IO.Out, body)
	}
	if o.screen == nil {
		o.screen = render.NewScreen(o.IO.Out, o.Terminal)
	}
	header := fmt.Sprintf("ckpt status  %s, on each change and every %s  (Ctrl-C stops)\n\n", o.Now().Format(render.TimeLayout), o.Every)
	return o.screen.Draw(header + body)
}
