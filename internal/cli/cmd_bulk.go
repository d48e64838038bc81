package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
)

// BulkOptions are the inputs of `ckpt bulk`.
type BulkOptions struct {
	writeOptions
	Request bulk.Request
}

func newBulkCmd(f *cmdutil.Factory) *cobra.Command {
	o := &BulkOptions{writeOptions: newWriter(f)}
	cmd := &cobra.Command{
		Use:   "bulk ACTION [TEXT] FILTERS...",
		Short: "One action on every checkpoint a filter picks: tell, note, done, abandon, archive, unblock",
		Long: `Take one action on every checkpoint the filters pick, as the single commands
do on one: tell (TEXT is the message), note (TEXT is the note), done, abandon
(TEXT is the reason), archive (TEXT is the reason, default complete; only
ended work), unblock (clear every active blocker). The filters are the
dashboard's: --prefix, --status, --presence (the word the dashboard shows:
working, waiting, blocked, dead, stale, …), --of-agent, --parent, --label
and --match (text in the ID, title, agent or current step); at least one,
or --all-checkpoints for every one.

--dry-run says what would happen to each and changes nothing. Each
checkpoint is decided again as it is written: one done since the preview
is skipped, not done twice. Every checkpoint's outcome is printed: done,
skipped (and why), forbidden (outside what a server token may change) or
failed; the exit status is 1 when any was forbidden or failed. Over a
server store (CKPT_STORE=https://…) the token's grant applies to each.`,
		Example: `  ckpt bulk tell --prefix kai-7/ --presence waiting "The schema change is approved"
  ckpt bulk done --prefix batch/ --dry-run
  ckpt bulk archive --status done,abandoned --prefix batch/ --json`,
		Args: cmdutil.RangeArgs(1, 2, "an action and, for tell, note, abandon and archive, its text"),
	}
	sel := &o.Request.Select
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.Request.Action = bulk.Action(args[0])
		if len(args) == 2 {
			o.Request.Text = args[1]
		}
		return runBulk(ctx, o)
	})
	fl := cmd.Flags()
	fl.StringVar(&sel.Prefix, "prefix", "", "only IDs under `PREFIX`, e.g. kai-7/")
	fl.StringVar(&sel.Status, "status", "", "only these `STATUSES` (comma-separated)")
	fl.StringVar(&sel.Presence, "presence", "", "only these presence `WORDS` (comma-separated: waiting,blocked,dead,…)")
	fl.StringVar(&sel.Agent, "of-agent", "", "only checkpoints of this `AGENT` (ID or name; --agent is who acts)")
	fl.StringVar(&sel.Parent, "parent", "", "only children of this `ID`")
	fl.StringVar(&sel.Label, "label", "", "only checkpoints with this `LABEL`")
	fl.StringVar(&sel.Text, "match", "", "only checkpoints with `TEXT` in the ID, title, agent or current step")
	fl.BoolVar(&sel.All, "all-checkpoints", false, "every checkpoint, when no other filter is given")
	fl.BoolVar(&o.Request.DryRun, "dry-run", false, "say what would happen to each, change nothing")
	fl.BoolVar(&o.JSON, "json", false, "print the result as JSON: action, matched, counts, items [{id, outcome, reason, rev}]")
	return cmd
}

func runBulk(ctx context.Context, o *BulkOptions) error {
	if err := o.Request.Check(); err != nil {
		return err
	}
	var res bulk.Result
	err := o.withStore(func(st ckpt.Store) error {
		var err error
		res, err = bulk.Run(ctx, bulk.Env{Store: st, Now: o.Now(), Actor: o.eventActor(), Alive: process.Alive}, o.Request)
		return err
	})
	if err != nil {
		return err
	}
	if o.JSON {
		err = cmdutil.WriteJSON(o.IO.Out, res)
	} else {
		err = writeBulk(o.IO.Out, res)
	}
	if err != nil {
		return err
	}
	if n := res.Counts[bulk.Forbidden] + res.Counts[bulk.Failed]; n > 0 {
		return fmt.Errorf("%d of %d checkpoints were not changed (forbidden or failed): see each above", n, len(res.Items))
	}
	return nil
}

// writeBulk prints one line per checkpoint and a summary.
func writeBulk(w io.Writer, r bulk.Result) error {
	var b strings.Builder
	for _, it := range r.Items {
		fmt.Fprintf(&b, "%s  %s", it.ID, it.Outcome)
		if it.Rev > 0 {
			fmt.Fprintf(&b, "  rev %d", it.Rev)
		}
		if it.Reason != "" {
			fmt.Fprintf(&b, ": %s", it.Reason)
		}
		b.WriteByte('\n')
	}
	verb := map[bulk.Action]string{bulk.Tell: "told", bulk.Note: "noted", bulk.Done: "marked done", bulk.Abandon: "marked abandoned",
		bulk.Archive: "archived", bulk.Unblock: "unblocked"}[r.Action]
	if r.DryRun {
		fmt.Fprintf(&b, "%d of %d would be %s (dry run: nothing changed)\n", r.Counts[bulk.Will], len(r.Items), verb)
	} else {
		fmt.Fprintf(&b, "%d of %d %s", r.Counts[bulk.Applied], len(r.Items), verb)
		for _, k := range []string{bulk.Skipped, bulk.Forbidden, bulk.Failed} {
			if r.Counts[k] > 0 {
				fmt.Fprintf(&b, ", %d %s", r.Counts[k], k)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
