package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/mirror"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/render"
)

// ImportOptions are the inputs of `ckpt import`.
type ImportOptions struct {
	writeOptions
	WorkDir string // relative paths are taken from here
	Format  string
	Paths   []string
	ID      string // overrides the ID the file suggests; one path only
}

func newImportCmd(f *factory) *cobra.Command {
	o := &ImportOptions{writeOptions: f.writer(), WorkDir: f.env.WorkDir}
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
				return usagef("import takes a FORMAT and at least one PATH (got %d argument(s)); see ckpt import --help", len(args))
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

// importedFile is one checkpoint import wrote, or one file it could not.
type importedFile struct {
	Path     string   `json:"path"`
	ID       string   `json:"id,omitempty"`
	Rev      int64    `json:"rev,omitempty"`
	Created  bool     `json:"created"`
	Warnings []string `json:"warnings"`
	Error    string   `json:"error,omitempty"`

	state *ckpt.Checkpoint
}

func runImport(ctx context.Context, o *ImportOptions) error {
	f, err := mirror.NewFormat(o.Format)
	if err != nil {
		return err
	}
	if o.ID != "" {
		if len(o.Paths) > 1 {
			return usagef("--id names one checkpoint, but %d files were given: import them one at a time", len(o.Paths))
		}
		if err := ckpt.ValidateID(o.ID); err != nil {
			return fmt.Errorf("--id: %w", err)
		}
	}
	var results []importedFile
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
		}
	}
	if o.JSON {
		if err := writeJSON(o.IO.Out, results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.Error == "" {
				verb := "updated"
				if r.Created {
					verb = "created"
				}
				fmt.Fprintf(o.IO.Out, "imported %s as %s  rev %d  %s  (%s, %s)\n", r.Path, r.ID, r.Rev, verb, render.ProgressCount(r.state.Progress), r.state.Status)
			}
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

// importPath imports one file and reports each checkpoint it became. A file
// that cannot be read or stored is reported (warning, result with Error)
// and its error returned.
func (o *ImportOptions) importPath(ctx context.Context, st ckpt.Store, f protocols.Format, given string) ([]importedFile, error) {
	path := given
	if !filepath.IsAbs(path) {
		path = filepath.Join(o.WorkDir, path)
	}
	fail := func(err error) ([]importedFile, error) {
		printWarning(o.IO.ErrOut, fmt.Sprintf("%s not imported: %v", given, err))
		return []importedFile{{Path: given, Warnings: []string{}, Error: err.Error()}}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(err)
	}
	items, err := importItems(f, path, data)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", ckpt.ErrInvalid, err))
	}
	var out []importedFile
	var firstErr error
	for _, it := range items {
		r := importedFile{Path: given, ID: it.ID, Warnings: it.Warnings}
		if r.Warnings == nil {
			r.Warnings = []string{}
		}
		if o.ID != "" {
			r.ID = o.ID
		}
		for _, w := range it.Warnings {
			printWarning(o.IO.ErrOut, given+": "+w)
		}
		res, err := o.store(ctx, st, r.ID, it.State, f.Name()+":"+given)
		if err != nil {
			printWarning(o.IO.ErrOut, fmt.Sprintf("%s not imported as %s: %v", given, r.ID, err))
			r.Error = err.Error()
			if firstErr == nil {
				firstErr = err
			}
		} else {
			r.Rev, r.Created, r.state = res.State.Rev, res.State.Rev == 1, res.State
		}
		out = append(out, r)
	}
	return out, firstErr
}

// store appends an imported event holding state as checkpoint id.
func (o *ImportOptions) store(ctx context.Context, st ckpt.Store, id string, state *ckpt.Checkpoint, source string) (ckpt.AppendResult, error) {
	if err := ckpt.ValidateID(id); err != nil {
		return ckpt.AppendResult{}, fmt.Errorf("%w (give the checkpoint an ID with --id)", err)
	}
	e, err := ckpt.NewEvent(ckpt.EventImported, o.Now(), o.Actor, ckpt.Snapshot{State: *state, Source: source})
	if err != nil {
		return ckpt.AppendResult{}, err
	}
	res, err := st.Append(ctx, id, e, ckpt.AppendOptions{})
	for _, w := range res.Warnings {
		printWarning(o.IO.ErrOut, w)
	}
	return res, err
}

// importItems reads one file in format f. A sitebuilder STATUS.md aggregate,
// which the format's Import does not take (it is not a checkpoint file),
// gives one checkpoint per agent row.
func importItems(f protocols.Format, path string, data []byte) ([]protocols.Imported, error) {
	imp, err := f.Import(path, data)
	if err == nil {
		return []protocols.Imported{imp}, nil
	}
	if f.Name() != sitebuilder.Name {
		return nil, err
	}
	rows, notes, rerr := sitebuilder.ParseStatusMarkdown(data)
	if rerr != nil {
		return nil, fmt.Errorf("%v; nor is it a STATUS.md aggregate: %v", err, rerr)
	}
	out := make([]protocols.Imported, 0, len(rows))
	seen := map[string]int{}
	for i, row := range rows {
		it := statusRowCheckpoint(row)
		if n := seen[it.ID]; n > 0 {
			it.ID = fmt.Sprintf("%s-%d", it.ID, n+1)
		}
		seen[it.ID]++
		if i == 0 {
			it.Warnings = append(notes, it.Warnings...)
		}
		out = append(out, it)
	}
	return out, nil
}

// statusRowCheckpoint makes a checkpoint of one STATUS.md row: agent, task,
// progress and status are all a row knows.
func statusRowCheckpoint(row sitebuilder.StatusRow) protocols.Imported {
	agent := idPart(row.Agent)
	task := idPart(row.Task)
	id := agent
	if task != "" {
		id = agent + "-" + task
	}
	if id == "" {
		id = "status-row"
	}
	c := &ckpt.Checkpoint{
		ID:        id,
		Agent:     ckpt.Agent{ID: strings.ToLower(row.Agent), Name: row.AgentName},
		Title:     row.Task,
		Status:    row.Status,
		Resume:    ckpt.Resume{Resumable: true},
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(sitebuilder.DefaultInterval)},
	}
	if !c.Status.Valid() {
		c.Status = ckpt.StatusPending
	}
	if row.Percent != nil && !math.IsNaN(*row.Percent) {
		done := int(math.Round(min(max(*row.Percent, 0), 100)))
		c.Progress = ckpt.Progress{Done: done, Total: 100}
	}
	raw, _ := json.Marshal(map[string]any{"agent": row.Agent, "agent_name": row.AgentName, "task": row.Task, "progress": row.Progress, "last_update": row.LastUpdate, "status": row.StatusText})
	c.Meta = map[string]json.RawMessage{"sitebuilder_status_row": raw}
	w := []string{fmt.Sprintf("STATUS.md row %q: only agent, task, progress and status are known; suggested ID %q", row.Agent, id)}
	return protocols.Imported{ID: id, State: c, Warnings: w}
}

// idPart reduces text to an ID segment: lower case, runs of other
// characters as one '-', at most 60 bytes.
func idPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 60 {
		out = strings.Trim(out[:60], "-.")
	}
	return out
}
