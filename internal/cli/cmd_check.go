package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// CheckOptions are the inputs of `ckpt check` and `ckpt repair`.
type CheckOptions struct {
	IO   cmdutil.IOStreams
	IDs  []string // empty: every checkpoint
	JSON bool
	// Open opens the store, with the mirror list in use for a local store
	// (nil for a store without a local directory, whose mirrors are not
	// checked). Check and repair run through the store's ckpt.Checker and
	// ckpt.Repairer capabilities.
	Open func() (ckpt.Store, *mirror.List, error)
}

func newCheckCmd(f *cmdutil.Factory) *cobra.Command {
	o := &CheckOptions{IO: f.Env.IOStreams, Open: func() (ckpt.Store, *mirror.List, error) { return openCheckedStore(f) }}
	cmd := &cobra.Command{
		Use:   "check [ID...]",
		Short: "Verify the store (read-only); exit 7 when it finds errors",
		Long: `Verify every checkpoint, or the ones named: history checksums and chain,
state file against the history, backups, stray files. check writes nothing.

Each problem is an error or a warning and names its repair. An error breaks
a MUST of the store's design (a history line damaged, edited or missing); a
warning a SHOULD (a stale or missing state file or backup, a leftover
temporary file, a torn last line never acknowledged), which reads work
around. Exit code 7 when any error is found: run ckpt repair to mend it.`,
		Example: `  ckpt check
  ckpt check kai-7/secondary-a --json`,
	}
	cmd.RunE = f.RunE(func(ctx context.Context, args []string) error {
		o.IDs = args
		return runCheck(ctx, o)
	})
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return cmd
}

func (o *CheckOptions) validate() error {
	for _, id := range o.IDs {
		if err := ckpt.ValidateID(id); err != nil {
			return err
		}
	}
	return nil
}

// openCheckedStore opens the store for check or repair: the local store
// itself (not the mirroring wrapper commands write through), or whatever
// store the command is pointed at, which may not offer the capability.
func openCheckedStore(f *cmdutil.Factory) (ckpt.Store, *mirror.List, error) {
	if u := f.Location(); f.Store != nil || httpapi.IsURL(u) || isPGURL(u) {
		st, err := f.OpenStore()
		return st, nil, err
	}
	st, err := openFileStore(f)
	if err != nil {
		return nil, nil, err
	}
	l := mirrorList(f, st)
	return st, &l, nil
}

// errNoCapability says that st cannot do what was asked of it.
func errNoCapability(what string) error {
	return fmt.Errorf("%w: this store offers no %s: it cannot verify its own files from here; run ckpt %s on the host that keeps them (a local .ckpt directory: pass --store DIR)",
		ckpt.ErrInvalid, what, what)
}

func runCheck(ctx context.Context, o *CheckOptions) error {
	return o.withStore(func(st ckpt.Store, mirrors *mirror.List) error {
		chk, ok := ckpt.As[ckpt.Checker](st)
		if !ok {
			return errNoCapability("check")
		}
		rep, err := chk.Check(ctx, o.IDs)
		if err != nil {
			return err
		}
		if mirrors != nil {
			rep.Problems = append(rep.Problems, mirror.Findings(ctx, st, *mirrors, o.IDs)...)
		}
		rep.Problems = append(rep.Problems, partialFindings(ctx, st, o.IDs)...)
		if err := printReport(o.IO.Out, rep, o.JSON, false); err != nil {
			return err
		}
		if n := rep.Errors(); n > 0 {
			return fmt.Errorf("%w: check found %d error(s): run ckpt repair to mend them", ckpt.ErrCorrupt, n)
		}
		return nil
	})
}

// withStore validates the IDs, opens the store for check or repair, runs
// fn and closes the store.
func (o *CheckOptions) withStore(fn func(st ckpt.Store, mirrors *mirror.List) error) error {
	if err := o.validate(); err != nil {
		return err
	}
	st, mirrors, err := o.Open()
	if err != nil {
		return err
	}
	err = fn(st, mirrors)
	return errors.Join(err, closeErr(st.Close(), err))
}

// printReport prints a check or repair report.
func printReport(w io.Writer, rep *ckpt.Report, asJSON, repair bool) error {
	if asJSON {
		return render.ReportJSON(w, rep)
	}
	return render.ReportText(w, rep, repair)
}

// partialFindings are render.PartialProblem's warnings for the checkpoints ids
// of st, or for every checkpoint when ids is empty (summaries say which
// are partial; only those are read in full). A checkpoint that cannot be
// read is left to the store's own findings: this adds warnings, never
// errors.
func partialFindings(ctx context.Context, st ckpt.Store, ids []string) []ckpt.Problem {
	if len(ids) == 0 {
		sums, err := ckpt.ListAll(ctx, st, ckpt.Filter{Status: []ckpt.Status{ckpt.StatusDone}})
		var damaged *ckpt.DamagedError
		if err != nil && !errors.As(err, &damaged) {
			sums = nil // the readable ones are listed despite damage
		}
		for _, s := range sums {
			if s.Partial {
				ids = append(ids, s.ID)
			}
		}
	}
	var out []ckpt.Problem
	for _, id := range ids {
		if c, err := st.Get(ctx, id, 0); err == nil {
			if p, ok := render.PartialProblem(c); ok {
				out = append(out, p)
			}
		}
	}
	return out
}
