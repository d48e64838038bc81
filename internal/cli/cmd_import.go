package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/protocols"
)

// ImportOptions are the inputs of `ckpt import`.
type ImportOptions struct {
	writeOptions
	WorkDir string // relative paths are taken from here
	Format  string
	Paths   []string
	ID      string // overrides the ID the file suggests; one path only
}

func newImportCmd(f *cmdutil.Factory) *cobra.Command {
	o := &ImportOptions{writeOptions: newWriter(f), WorkDir: f.Env.WorkDir}
	cmd := &cobra.Command{
		Use:   "import FORMAT PATH...",
		Short: "Read seed-protocol files into checkpoints",
		Long: `Read each file in FORMAT into a checkpoint, as an imported event: the first
event of a new checkpoint, or a new snapshot of an existing one. The
checkpoint ID is the one the file suggests (a track ID, an agent file's name,
<agent>-<task>, a plan directory) unless --id gives it.

Reading is lenient: a string where a list was promised, PAUSED, missing
timestamps, a .md file where .json was due are read with a warning that says
what was guessed or kept aside, and fields ckpt has no place for are kept so
that ckpt export writes them back. A file that cannot be read at all is
reported and skipped; the command fails (exit 2) only when no file could be
imported.

Formats: ` + strings.Join(mirror.Formats, ", ") + ` (see docs/formats.md).
A sitebuilder STATUS.md aggregate imports one checkpoint per agent row.`,
		Example: `  ckpt import superpowers conductor/tracks/*/metadata.json
  ckpt import agent-checkpoints agent_checkpoints/secondary_a.json --id kai-7/secondary_a
  ckpt import plan plans/260220-1149-feature/plan.md --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.Usagef("import takes a FORMAT and at least one PATH (got %d argument(s)); see ckpt import --help", len(args))
			}
			return nil
		},
	}
	cmd.RunE = runWrite(f, &o.writeOptions, func(ctx context.Context, args []string) error {
		o.Format, o.Paths = args[0], args[1:]
		return runImport(ctx, o)
	})
	cmd.Flags().StringVar(&o.ID, "id", "", "store the file as checkpoint `ID` (one PATH only)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print a JSON array: {"path","id","rev","created","warnings","error"} per checkpoint`)
	return cmd
}

func runImport(ctx context.Context, o *ImportOptions) error {
	f, err := mirror.NewFormat(o.Format)
	if err != nil {
		return err
	}
	if o.ID != "" {
		if len(o.Paths) > 1 {
			return cmdutil.Usagef("--id names one checkpoint, but %d files were given: import them one at a time", len(o.Paths))
		}
		if err := ckpt.ValidateID(o.ID); err != nil {
			return fmt.Errorf("--id: %w", err)
		}
	}
	var results []mirror.ImportResult
	var firstErr error
	err = o.withStore(func(st ckpt.Store) error {
		for _, p := range o.Paths {
			rs, err := o.importPath(ctx, st, f, p)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			results = append(results, rs...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	imported := 0
	for _, r := range results {
		if r.Error == "" {
			imported++
			if !o.JSON {
				fmt.Fprintln(o.IO.Out, r)
			}
		}
	}
	if o.JSON {
		if err := cmdutil.WriteJSON(o.IO.Out, results); err != nil {
			return err
		}
	}
	if imported == 0 && errors.Is(firstErr, fs.ErrNotExist) {
		var pe *fs.PathError
		if errors.As(firstErr, &pe) {
			return fmt.Errorf("%w: nothing imported: there is no file %s; give the path of a %s file", ckpt.ErrInvalid, pe.Path, o.Format)
		}
	}
	if imported == 0 {
		advice := fmt.Sprintf("check that the files are %s files (ckpt import --help says what each format reads)", o.Format)
		if errors.Is(firstErr, ckpt.ErrInvalid) || errors.Is(firstErr, ckpt.ErrCorrupt) || errors.Is(firstErr, ckpt.ErrNoStore) || errors.Is(firstErr, ckpt.ErrConflict) {
			return fmt.Errorf("nothing imported: %w; %s", firstErr, advice)
		}
		return fmt.Errorf("%w: nothing imported: %v; %s", ckpt.ErrInvalid, firstErr, advice)
	}
	return nil
}

// importPath imports one file (mirror.ImportPath) and reports each
// checkpoint it became. A file that cannot be read or stored is reported
// (warning, result with Error) and its error returned.
func (o *ImportOptions) importPath(ctx context.Context, st ckpt.Store, f protocols.Format, given string) ([]mirror.ImportResult, error) {
	rs, err := mirror.ImportPath(ctx, st, f, absPath(o.WorkDir, given), mirror.ImportOptions{ID: o.ID, Source: given, At: o.Now(), Actor: o.eventActor()})
	if err != nil {
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s not imported: %v", given, err))
		return []mirror.ImportResult{{Path: given, Warnings: []string{}, Error: err.Error()}}, err
	}
	var firstErr error
	for i := range rs {
		r := &rs[i]
		for _, w := range r.Warnings {
			cmdutil.PrintWarning(o.IO.ErrOut, given+": "+w)
		}
		for _, w := range r.StoreWarnings {
			cmdutil.PrintWarning(o.IO.ErrOut, w)
		}
		if r.Err == nil {
			continue
		}
		if ckpt.ValidateID(r.ID) != nil {
			r.Err = fmt.Errorf("%w (give the checkpoint an ID with --id)", r.Err)
			r.Error = r.Err.Error()
		}
		cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("%s not imported as %s: %v", given, r.ID, r.Err))
		if firstErr == nil {
			firstErr = r.Err
		}
	}
	return rs, firstErr
}
