package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// LsOptions are the inputs of `ckpt ls`.
type LsOptions struct {
	common
	Statuses []string // any of these (words ParseStatus accepts)
	Agent    string
	Parent   string
	Label    string
	Prefix   string
	All      bool // include archived checkpoints
	JSON     bool
	// Limit is the most rows: -1 for the default (a page of
	// ckpt.DefaultPageSize for the table, everything for --json), 0 for
	// everything. After continues after a previous page's cursor.
	Limit int
	After string
}

func newLsCmd(f *cmdutil.Factory) *cobra.Command {
	o := &LsOptions{common: newCommon(f)}
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List checkpoints, with status, progress and last sign of life",
		Long: `List the checkpoints the filters select, ordered by ID. Archived checkpoints
are left out unless --all is given. --status may repeat: any of them matches.
LAST SEEN is the later of the last heartbeat and the last update; a live
checkpoint silent for 2x its interval is marked warn, for 4x stale.

The table shows a page of 50 rows and says on stderr how to see the rest
(--after CURSOR for the next page, --limit 0 for all); --json prints
everything unless --limit is given.

--json prints a JSON array of summaries (ckpt.Summary), one per line ([]
when nothing matches); ckpt show ID --json prints a full state.`,
		Example: `  ckpt ls
  ckpt ls --status in_progress --status blocked --parent kai-7
  ckpt ls --agent Secondary-A --json`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error { return runLs(ctx, o) })
	fl := cmd.Flags()
	fl.StringArrayVar(&o.Statuses, "status", nil, "only checkpoints with this `STATUS` (repeat for any of several)")
	fl.StringVar(&o.Agent, "agent", "", "only checkpoints of this agent `ID` or name (here a filter, not the acting agent)")
	fl.StringVar(&o.Parent, "parent", "", "only checkpoints with this parent `ID`")
	fl.StringVar(&o.Label, "label", "", "only checkpoints with this `LABEL`")
	fl.StringVar(&o.Prefix, "prefix", "", "only IDs starting with `PREFIX`, e.g. kai-7/")
	fl.BoolVar(&o.All, "all", false, "include archived checkpoints")
	fl.BoolVar(&o.JSON, "json", false, "print a JSON array of the checkpoints")
	fl.IntVar(&o.Limit, "limit", -1, "show at most `N` checkpoints; 0 for all (default: 50 for the table, all for --json)")
	fl.StringVar(&o.After, "after", "", "continue after this `CURSOR`, printed by the previous page")
	return cmd
}

func runLs(ctx context.Context, o *LsOptions) error {
	filter := ckpt.Filter{Agent: o.Agent, Parent: o.Parent, Label: o.Label, Prefix: o.Prefix, IncludeArchived: o.All}
	for _, w := range o.Statuses {
		s, err := request.ParseStatus("--status", w)
		if err != nil {
			return err
		}
		filter.Status = append(filter.Status, s)
	}
	limit := o.Limit
	switch {
	case limit < -1:
		return fmt.Errorf("%w: --limit %d: give a number of rows, or 0 for all", ckpt.ErrInvalid, o.Limit)
	case limit == -1 && o.JSON:
		limit = 0
	case limit == -1:
		limit = ckpt.DefaultPageSize
	}
	return o.withStore(func(st ckpt.Store) error {
		var (
			list    []ckpt.Summary
			next    string
			damaged error
			err     error
		)
		switch {
		case limit == 0 && o.After == "" && o.JSON:
			// Page by page: --json over 100,000 holds one page of them.
			return streamJSON(ctx, st, filter, render.NewSummariesJSON(o.IO.Out))
		case limit == 0 && o.After == "":
			list, damaged, err = listSummaries(ctx, st, filter)
		default:
			list, next, damaged, err = listPage(ctx, st, ckpt.ListOptions{Filter: filter, Limit: limit, After: o.After})
		}
		if err != nil {
			return err
		}
		if err := o.printList(list); err != nil {
			return err
		}
		if next != "" {
			fmt.Fprintf(o.IO.ErrOut, "ckpt: showing %d; for the next page repeat the command with --after %s (--limit 0 shows all)\n", len(list), next)
		}
		return damaged
	})
}

// streamJSON writes every checkpoint f matches as ls --json's array, one
// page at a time. A *ckpt.DamagedError comes after the whole array (the
// readable checkpoints are printed); any other error may cut the array
// short.
func streamJSON(ctx context.Context, st ckpt.Store, f ckpt.Filter, js *render.SummariesJSONWriter) error {
	var err error
	if rows, ok := ckpt.As[summaryJSONLister](st); ok {
		err = rows.EachSummaryJSON(ctx, f, js.AddJSON)
	} else {
		err = ckpt.EachPage(ctx, st, f, js.Add)
	}
	if d := (*ckpt.DamagedError)(nil); err != nil && !errors.As(err, &d) {
		return err
	}
	if cerr := js.Close(); cerr != nil {
		return cerr
	}
	return err
}

// summaryJSONLister is a store that writes its summaries' JSON itself
// (filestore copies them from its index instead of decoding and encoding
// each one).
type summaryJSONLister interface {
	EachSummaryJSON(ctx context.Context, f ckpt.Filter, fn func(row []byte) error) error
}

// listPage lists one page; see listSummaries for damaged.
func listPage(ctx context.Context, st ckpt.Store, opts ckpt.ListOptions) (list []ckpt.Summary, next string, damaged, err error) {
	p, err := st.List(ctx, opts)
	var d *ckpt.DamagedError
	if errors.As(err, &d) {
		return p.Items, p.Next, err, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	return p.Items, p.Next, nil, nil
}

// printList prints the listing, as a table or a JSON array of summaries.
func (o *LsOptions) printList(list []ckpt.Summary) error {
	if o.JSON {
		return render.SummariesJSON(o.IO.Out, list)
	}
	if len(list) == 0 {
		_, err := fmt.Fprintln(o.IO.ErrOut, "ckpt: no checkpoints match (start one with ckpt start ID; ckpt ls --all shows archived ones)")
		return err
	}
	return render.ListTable(o.IO.Out, list, o.Now(), process.Alive)
}

// listSummaries lists the checkpoints f matches. When some cannot be read,
// it still returns the others, and the *ckpt.DamagedError as damaged: the
// caller shows what it can, then returns damaged (exit 7, naming check and
// repair). err is any other failure.
func listSummaries(ctx context.Context, st ckpt.Store, f ckpt.Filter) (list []ckpt.Summary, damaged, err error) {
	list, err = ckpt.ListAll(ctx, st, f)
	var d *ckpt.DamagedError
	if errors.As(err, &d) {
		return list, err, nil
	}
	return list, nil, err
}

// listReadable is listSummaries with the full state of each checkpoint
// (ckpt.GetAll), for the views that need more than a summary (ckpt
// status's current step is read from the steps).
func listReadable(ctx context.Context, st ckpt.Store, f ckpt.Filter) (list []*ckpt.Checkpoint, damaged, err error) {
	list, err = ckpt.GetAll(ctx, st, f)
	if d := (*ckpt.DamagedError)(nil); errors.As(err, &d) {
		return list, err, nil
	}
	return list, nil, err
}
