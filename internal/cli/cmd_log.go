package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/render"
)

// LogOptions are the inputs of `ckpt log`.
type LogOptions struct {
	common
	ID   string
	From int64 // first seq shown; 0 or 1: from the start
	JSON bool
}

// logEntry is one event as `ckpt log --json` prints it: the history line's
// fields, checksum included.
type logEntry struct {
	Seq   int64           `json:"seq"`
	At    time.Time       `json:"at"`
	Type  ckpt.EventType  `json:"type"`
	Actor ckpt.Actor      `json:"actor"`
	Key   string          `json:"key,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Prev  string          `json:"prev,omitempty"`
	Sum   string          `json:"sum"`
}

func newLogCmd(f *factory) *cobra.Command {
	o := &LogOptions{common: f.common()}
	cmd := &cobra.Command{
		Use:   "log ID",
		Short: "Show a checkpoint's history, one event per line",
		Long: `Show the events of checkpoint ID in order: revision, time, type, actor,
idempotency key and what the event did. --json prints one JSON object per
line per event with seq, at, type, actor, key, data, prev and sum (the
chained checksum).`,
		Example: `  ckpt log kai-7/secondary-a
  ckpt log kai-7/secondary-a --from 5 --json`,
		Args: exactArgs(1, "one checkpoint ID"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.ID = args[0]
		return runLog(ctx, o)
	})
	cmd.Flags().Int64Var(&o.From, "from", 0, "start at revision `N`")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print one JSON object per event")
	return cmd
}

func runLog(ctx context.Context, o *LogOptions) error {
	if err := ckpt.ValidateID(o.ID); err != nil {
		return err
	}
	if o.From < 0 {
		return fmt.Errorf("%w: --from %d: give a revision of 1 or more", ckpt.ErrInvalid, o.From)
	}
	return o.withStore(func(st ckpt.Store) error {
		events, err := st.History(ctx, o.ID, max(o.From, 1), 0)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(o.IO.Out)
		if o.JSON {
			enc := json.NewEncoder(w)
			for _, e := range events {
				if err := enc.Encode(logEntry{Seq: e.Seq, At: e.At, Type: e.Type, Actor: e.Actor, Key: e.Key, Data: e.Data, Prev: e.Prev, Sum: e.Sum}); err != nil {
					return err
				}
			}
			return w.Flush()
		}
		// Replaying the history gives each event's resulting state, which
		// names what it did (a step's status, a cycle count).
		human := render.NewTerminalWriter(w)
		var state *ckpt.Checkpoint
		if o.From > 1 {
			if state, err = st.Get(ctx, o.ID, o.From-1); err != nil {
				return err
			}
		}
		for _, e := range events {
			desc := string(e.Type)
			if next, err := ckpt.Apply(o.ID, state, e); err == nil {
				state = next
				desc = render.DescribeEvent(state, e)
			}
			who := e.Actor.Agent
			if who == "" {
				who = "-"
			}
			if e.Actor.Session != "" {
				who += "@" + e.Actor.Session
			}
			line := fmt.Sprintf("%4d  %s  %-10s  %-14s  %s", e.Seq, e.At.Format(render.TimeLayout), e.Type, who, desc)
			if e.Key != "" {
				line += "  [key " + e.Key + "]"
			}
			fmt.Fprintln(human, line)
		}
		if err := human.Flush(); err != nil {
			return err
		}
		return w.Flush()
	})
}
