package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
)

// MirrorOptions are the inputs of the `ckpt mirror` commands.
type MirrorOptions struct {
	IO  IOStreams
	Now func() time.Time
	// OpenStore opens the store: it must be the local .ckpt store, whose
	// directory holds the mirror list.
	OpenStore func() (ckpt.Store, string, error)
	WorkDir   string

	Format string
	Root   string // --root, relative to WorkDir or absolute; default WorkDir
	Prefix string
	ID     string
	IDs    []string // sync and check: only these checkpoints
	JSON   bool
}

func newMirrorCmd(f *factory) *cobra.Command {
	o := &MirrorOptions{IO: f.env.IOStreams, WorkDir: f.env.WorkDir}
	o.Now = func() time.Time { return f.now() }
	o.OpenStore = func() (ckpt.Store, string, error) {
		st, err := f.openFileStore()
		if err != nil {
			return nil, "", err
		}
		return st, st.Dir(), nil
	}
	cmd := &cobra.Command{
		Use:   "mirror",
		Short: "Keep seed-format files (metadata.json, agent_checkpoints/…) in step with checkpoints",
		Long: `A mirror rewrites a seed system's own file every time a checkpoint changes,
so the orchestrators, scripts and people that read those files keep working
while agents record their work with ckpt. Mirrors are listed in the store's
mirrors.json; every write (CLI verbs, hooks, MCP, heartbeats) writes the
mirrors of the checkpoint it changed after the change is durable. A mirror
that cannot be written prints "ckpt: warning: mirror …" and never fails the
write; ckpt mirror check finds mirrors that do not match, and ckpt mirror sync
rewrites them.

Formats: ` + strings.Join(formatNames, ", ") + `. See docs/formats.md.`,
	}
	cmd.AddCommand(newMirrorAddCmd(f, o), newMirrorLsCmd(f, o), newMirrorRmCmd(f, o), newMirrorSyncCmd(f, o), newMirrorCheckCmd(f, o))
	return cmd
}

func addMirrorSelectFlags(cmd *cobra.Command, o *MirrorOptions) {
	fl := cmd.Flags()
	fl.StringVar(&o.Root, "root", "", "the `DIR` the seed system's files live under (default: the working directory)")
	fl.StringVar(&o.Prefix, "prefix", "", "mirror only checkpoints whose ID starts with `P` (default: every checkpoint)")
	fl.StringVar(&o.ID, "id", "", "mirror only checkpoint `ID`")
	cmd.MarkFlagsMutuallyExclusive("prefix", "id")
}

func newMirrorAddCmd(f *factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "add FORMAT",
		Short: "Mirror checkpoints in a seed format from now on",
		Long: `Add a mirror: from now on every change to a selected checkpoint also rewrites
its file in FORMAT under --root, atomically. The selected checkpoints that
exist already are written at once.

Where each format writes, under the root:
  superpowers        conductor/tracks/<track-id>/metadata.json (under .metadata.lock)
  ccc                .ccc-progress.md
  agent-checkpoints  agent_checkpoints/<agent>.json, backups/ (last 10), archives
  sitebuilder        progress/checkpoints/<agent>-<task>.json, progress/STATUS.md,
                     messages/outbox-<agent>.md
  plan               plans/<id>/plan.md and plans/<id>/.checkpoint/`,
		Example: `  ckpt mirror add superpowers --id configurable-models_20260706
  ckpt mirror add agent-checkpoints --prefix kai-7/ --root feature-updates/KAI-7
  ckpt mirror add sitebuilder --root docs/agentic-orchestration`,
		Args: exactArgs(1, "one FORMAT"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.Format = args[0]
		return runMirrorAdd(ctx, o)
	})
	addMirrorSelectFlags(cmd, o)
	return cmd
}

func newMirrorLsCmd(f *factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List the mirrors",
		Args:  exactArgs(0, "no arguments"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error { return runMirrorLs(o) })
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print mirrors.json's entries as a JSON array")
	return cmd
}

func newMirrorRmCmd(f *factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rm FORMAT",
		Short: "Stop a mirror (its files are left as they are)",
		Long: `Remove the mirror of FORMAT with the given --root and selector (as ckpt
mirror ls shows them; the defaults are the working directory and every
checkpoint). Files already written are left alone. Exit 3 when no mirror
matches.`,
		Example: `  ckpt mirror rm superpowers --id configurable-models_20260706`,
		Args:    exactArgs(1, "one FORMAT"),
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.Format = args[0]
		return runMirrorRm(o)
	})
	addMirrorSelectFlags(cmd, o)
	return cmd
}

func newMirrorSyncCmd(f *factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sync [ID...]",
		Short: "Rewrite the mirrors of every checkpoint (or those named) now",
		Long: `Write every mirror of the selected checkpoints now: the repair for what ckpt
mirror check reports. Exit 1 when a mirror could not be written.`,
		Args: cobra.ArbitraryArgs,
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.IDs = args
		return runMirrorSync(ctx, o)
	})
	return cmd
}

func newMirrorCheckCmd(f *factory, o *MirrorOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check [ID...]",
		Short: "Report mirror files that do not match their checkpoint",
		Long: `Read every mirror file of the selected checkpoints, and report each one that
is missing, unreadable, or says something else than the checkpoint (status,
steps, progress, cycles, acceptance, title): ARCHITECTURE's SHOULD 9. It
writes nothing. Each problem names its repair: ckpt mirror sync ID, or for a
plan that is its own source of truth, ckpt plan sync PATH. Exit 7 when any
mirror does not match.`,
		Args: cobra.ArbitraryArgs,
	}
	cmd.RunE = f.runE(func(ctx context.Context, args []string) error {
		o.IDs = args
		return runMirrorCheck(ctx, o)
	})
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"checked", "problems": [{"format","root","id","path","what","repair"}]}`)
	return cmd
}

// storedRoot is how a root is written in mirrors.json: relative to the
// project directory (the store's parent) when inside it, so the project
// can move, else absolute.
func storedRoot(storeDir, root string) string {
	rel, err := filepath.Rel(filepath.Dir(storeDir), root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return root
	}
	return filepath.ToSlash(rel)
}

// entry builds the mirror entry the options describe.
func (o *MirrorOptions) entry(storeDir string) (mirrorEntry, error) {
	root := o.Root
	if root == "" {
		root = o.WorkDir
	} else if !filepath.IsAbs(root) {
		root = filepath.Join(o.WorkDir, root)
	}
	e := mirrorEntry{Format: o.Format, Root: storedRoot(storeDir, filepath.Clean(root)), ID: o.ID, Prefix: o.Prefix}
	return e, e.check()
}

func runMirrorAdd(ctx context.Context, o *MirrorOptions) error {
	if _, err := newFormat(o.Format); err != nil {
		return err
	}
	st, dir, err := o.OpenStore()
	if err != nil {
		return err
	}
	defer st.Close()
	e, err := o.entry(dir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(e.rootDir(dir)); err == nil && !fi.IsDir() {
		return fmt.Errorf("%w: --root %s is a file: give the directory the seed system's files live under", ckpt.ErrInvalid, e.rootDir(dir))
	}
	if _, err := editMirrors(dir, func(cfg *mirrorConfig) error {
		if slices.Contains(cfg.Mirrors, e) {
			return fmt.Errorf("%w: %s is mirrored under %s for %s already (ckpt mirror ls lists the mirrors)", ckpt.ErrExists, e.Format, e.rootDir(dir), e.selector())
		}
		cfg.Mirrors = append(cfg.Mirrors, e)
		return nil
	}); err != nil {
		return err
	}
	m := &mirroringStore{Store: st, storeDir: dir, entries: []mirrorEntry{e}, warn: o.IO.ErrOut, now: o.Now}
	written, failed, err := m.syncAll(ctx, nil)
	if err != nil {
		return fmt.Errorf("the mirror was added, but writing the existing checkpoints failed: %w (ckpt mirror sync retries)", err)
	}
	fmt.Fprintf(o.IO.Out, "mirroring %s under %s for %s: wrote %s\n", e.Format, e.rootDir(dir), e.selector(), plural(written, "checkpoint", "checkpoints"))
	if failed > 0 {
		return fmt.Errorf("the mirror was added, but %s could not be written (see the warnings above); fix the cause and run ckpt mirror sync", plural(failed, "checkpoint", "checkpoints"))
	}
	return nil
}

func runMirrorLs(o *MirrorOptions) error {
	st, dir, err := o.OpenStore()
	if err != nil {
		return err
	}
	st.Close()
	cfg, err := readMirrors(dir)
	if err != nil {
		return err
	}
	if o.JSON {
		list := cfg.Mirrors
		if list == nil {
			list = []mirrorEntry{}
		}
		return writeJSON(o.IO.Out, list)
	}
	if len(cfg.Mirrors) == 0 {
		_, err := fmt.Fprintln(o.IO.ErrOut, "ckpt: no mirrors (add one with ckpt mirror add FORMAT)")
		return err
	}
	tw := tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FORMAT\tROOT\tSELECTS")
	for _, m := range cfg.Mirrors {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Format, m.rootDir(dir), m.selector())
	}
	return tw.Flush()
}

func runMirrorRm(o *MirrorOptions) error {
	if _, err := newFormat(o.Format); err != nil {
		return err
	}
	st, dir, err := o.OpenStore()
	if err != nil {
		return err
	}
	st.Close()
	e, err := o.entry(dir)
	if err != nil {
		return err
	}
	_, err = editMirrors(dir, func(cfg *mirrorConfig) error {
		i := slices.Index(cfg.Mirrors, e)
		if i < 0 {
			return fmt.Errorf("%w: no mirror of %s under %s for %s: see the mirrors with ckpt mirror ls and give the same --root, --prefix or --id", ckpt.ErrNotFound, e.Format, e.rootDir(dir), e.selector())
		}
		cfg.Mirrors = slices.Delete(cfg.Mirrors, i, i+1)
		return nil
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.IO.Out, "stopped mirroring %s under %s for %s (its files are left as they are)\n", e.Format, e.rootDir(dir), e.selector())
	return err
}

// openMirrors opens the store with its mirror list.
func (o *MirrorOptions) openMirrors() (*mirroringStore, error) {
	st, dir, err := o.OpenStore()
	if err != nil {
		return nil, err
	}
	cfg, err := readMirrors(dir)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &mirroringStore{Store: st, storeDir: dir, entries: cfg.Mirrors, warn: o.IO.ErrOut, now: o.Now}, nil
}

func runMirrorSync(ctx context.Context, o *MirrorOptions) error {
	m, err := o.openMirrors()
	if err != nil {
		return err
	}
	defer m.Close()
	if len(m.entries) == 0 {
		return fmt.Errorf("%w: no mirrors to write: add one with ckpt mirror add FORMAT", ckpt.ErrNotFound)
	}
	written, failed, err := m.syncAll(ctx, o.IDs)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IO.Out, "wrote the mirrors of %s\n", plural(written, "checkpoint", "checkpoints"))
	if failed > 0 {
		return fmt.Errorf("the mirrors of %s could not be written (see the warnings above): fix the cause and run ckpt mirror sync again", plural(failed, "checkpoint", "checkpoints"))
	}
	return nil
}

// selected returns the checkpoints named by ids (all when ids is empty,
// archived ones included) that at least one entry selects.
func (m *mirroringStore) selected(ctx context.Context, ids []string) ([]*ckpt.Checkpoint, error) {
	var cs []*ckpt.Checkpoint
	if len(ids) == 0 {
		all, err := listFull(ctx, m.Store, ckpt.Filter{IncludeArchived: true})
		if err != nil {
			return nil, err
		}
		cs = all
	}
	for _, id := range ids {
		c, err := m.Store.Get(ctx, id, 0)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return slices.DeleteFunc(cs, func(c *ckpt.Checkpoint) bool { return !m.selects(c.ID) }), nil
}

// syncAll writes every mirror of the selected checkpoints and counts the
// checkpoints written in full and those with a mirror that failed (each
// failure printed as a warning).
func (m *mirroringStore) syncAll(ctx context.Context, ids []string) (written, failed int, err error) {
	cs, err := m.selected(ctx, ids)
	if err != nil {
		return 0, 0, err
	}
	for _, c := range cs {
		ok := true
		for _, e := range m.entries {
			if !e.selects(c.ID) {
				continue
			}
			if err := m.writeEntry(ctx, e, c); err != nil {
				printWarning(m.warn, fmt.Sprintf("mirror %s of %s under %s not written: %v", e.Format, c.ID, e.rootDir(m.storeDir), err))
				ok = false
			}
		}
		if ok {
			written++
		} else {
			failed++
		}
	}
	return written, failed, nil
}

// mirrorProblem is one mirror file that does not match its checkpoint.
type mirrorProblem struct {
	Format string `json:"format"`
	Root   string `json:"root"`
	ID     string `json:"id"`
	Path   string `json:"path,omitempty"`
	What   string `json:"what"`
	Repair string `json:"repair"`
}

// mirrorMismatchError is check's finding: exit 7, as for check's errors.
type mirrorMismatchError struct{ n int }

func (e mirrorMismatchError) Error() string {
	return fmt.Sprintf("%s not match the state: run the repair each names", plural(e.n, "mirror does", "mirrors do"))
}

func (e mirrorMismatchError) Unwrap() error { return ckpt.ErrCorrupt }

func runMirrorCheck(ctx context.Context, o *MirrorOptions) error {
	m, err := o.openMirrors()
	if err != nil {
		return err
	}
	defer m.Close()
	checked, problems, err := m.check(ctx, o.IDs)
	if err != nil {
		return err
	}
	if o.JSON {
		if problems == nil {
			problems = []mirrorProblem{}
		}
		if err := writeJSON(o.IO.Out, map[string]any{"checked": checked, "problems": problems}); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintf(o.IO.Out, "%s %s: %s: %s (repair: %s)\n", p.Format, p.ID, p.Path, p.What, p.Repair)
		}
		fmt.Fprintf(o.IO.Out, "%s checked, %s\n", plural(checked, "mirror file", "mirror files"), plural(len(problems), "problem", "problems"))
	}
	if len(problems) > 0 {
		return mirrorMismatchError{len(problems)}
	}
	return nil
}

// check compares every mirror file of the selected checkpoints with the
// checkpoint. It writes nothing.
func (m *mirroringStore) check(ctx context.Context, ids []string) (int, []mirrorProblem, error) {
	cs, err := m.selected(ctx, ids)
	if err != nil {
		return 0, nil, err
	}
	checked := 0
	var problems []mirrorProblem
	for _, c := range cs {
		for _, e := range m.entries {
			if !e.selects(c.ID) || isArchiveCopy(c) && e.Format != agentcheckpoints.Name {
				continue
			}
			checked++
			if p := m.checkOne(e, c); p != nil {
				problems = append(problems, *p)
			}
		}
	}
	return checked, problems, nil
}

// checkOne compares c's file of entry e with c. Both sides are read with
// the format's own Import (the file on disk, and the file Export would
// write), so only what the format carries is compared, and fields other
// tools add are not mistaken for drift.
func (m *mirroringStore) checkOne(e mirrorEntry, c *ckpt.Checkpoint) *mirrorProblem {
	root := e.rootDir(m.storeDir)
	p := &mirrorProblem{Format: e.Format, Root: root, ID: c.ID, Repair: "ckpt mirror sync " + c.ID}
	f, err := m.format(e.Format)
	if err != nil {
		p.What = err.Error()
		return p
	}
	path, err := mirrorPath(e.Format, root, c)
	if err != nil {
		p.What = "no file can be named for it: " + err.Error()
		p.Repair = "ckpt update " + c.ID + " to give it the IDs the format needs, then ckpt mirror sync " + c.ID
		return p
	}
	p.Path = path
	if pm, ok := c.Meta[plan.MetaPlan]; ok && e.Format == (plan.Format{}).Name() {
		var meta struct {
			PlanPath string `json:"planPath"`
		}
		if json.Unmarshal(pm, &meta) == nil && meta.PlanPath != "" {
			p.Repair = "ckpt plan sync " + meta.PlanPath + " (plan.md is the source of truth), or ckpt mirror sync " + c.ID
		}
	}
	disk, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.What = "missing"
		return p
	case err != nil:
		p.What = "unreadable: " + err.Error()
		return p
	}
	want, err := f.Export(c)
	if err != nil {
		p.What = "the checkpoint cannot be exported: " + err.Error()
		return p
	}
	got, gerr := f.Import(path, disk)
	exp, werr := f.Import(path, want)
	switch {
	case gerr != nil:
		p.What = "unreadable as " + e.Format + ": " + gerr.Error()
		return p
	case werr != nil:
		p.What = "the export cannot be read back: " + werr.Error()
		return p
	}
	if d := viewDiff(exp.State, got.State); d != "" {
		p.What = d
		return p
	}
	return nil
}

// mirrorPath is the file entry format writes for c under root.
func mirrorPath(format, root string, c *ckpt.Checkpoint) (string, error) {
	switch format {
	case superpowers.Name:
		return superpowers.MetadataPath(root, c)
	case ccc.Name:
		return filepath.Join(root, ccc.ProgressFile), nil
	case agentcheckpoints.Name:
		if isArchiveCopy(c) {
			return archiveCopyPath(root, c)
		}
		name, err := agentcheckpoints.FileName(c)
		return filepath.Join(root, agentcheckpoints.Dir, name), err
	case sitebuilder.Name:
		name, err := sitebuilder.FileName(c)
		if err == nil && c.Archived != nil && c.Archived.Reason == "complete" {
			name = strings.TrimSuffix(name, ".json") + "-complete.json"
		}
		return filepath.Join(root, sitebuilder.Dir, name), err
	case plan.Format{}.Name():
		if err := ckpt.ValidateID(c.ID); err != nil {
			return "", err
		}
		return filepath.Join(root, "plans", filepath.FromSlash(c.ID), "plan.md"), nil
	}
	return "", fmt.Errorf("%w: unknown format %q", ckpt.ErrInvalid, format)
}

// viewDiff says how two states read from seed files differ in what every
// format carries, or "" when they agree.
func viewDiff(want, got *ckpt.Checkpoint) string {
	var diffs []string
	add := func(field, w, g string) {
		if w != g {
			diffs = append(diffs, fmt.Sprintf("%s is %s in the file, %s in the checkpoint", field, quoteOrNone(g), quoteOrNone(w)))
		}
	}
	add("status", string(want.Status), string(got.Status))
	add("title", want.Title, got.Title)
	add("steps", stepsView(want.Steps), stepsView(got.Steps))
	add("progress", fmt.Sprintf("%d/%d", want.Progress.Done, want.Progress.Total), fmt.Sprintf("%d/%d", got.Progress.Done, got.Progress.Total))
	add("cycles", fmt.Sprintf("%d/%d", want.Cycles.Count, want.Cycles.Max), fmt.Sprintf("%d/%d", got.Cycles.Count, got.Cycles.Max))
	add("acceptance", acceptanceView(want.Acceptance), acceptanceView(got.Acceptance))
	if len(diffs) > 3 {
		diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
	}
	return strings.Join(diffs, "; ")
}

func stepsView(steps []ckpt.Step) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.ID + " " + string(s.Status)
	}
	return strings.Join(parts, ", ")
}

func acceptanceView(list []ckpt.Criterion) string {
	parts := make([]string, len(list))
	for i, a := range list {
		met := "unmet"
		if a.Met {
			met = "met"
		}
		parts[i] = a.ID + " " + met
	}
	return strings.Join(parts, ", ")
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return "[" + clip(s, 120) + "]"
}

// mirrorFindings are ckpt check's findings about the mirrors of the store st
// in storeDir (ARCHITECTURE's SHOULD 9): one warning per mirror file of the
// checkpoints ids (all when empty) that is missing or does not match its
// checkpoint, and one for a damaged mirror list. It writes nothing.
func mirrorFindings(ctx context.Context, st ckpt.Store, storeDir string, ids []string) []ckpt.Problem {
	cfg, err := readMirrors(storeDir)
	if err != nil {
		return []ckpt.Problem{{Severity: "warning", What: "mirror list: " + err.Error(), Repair: "fix or remove " + filepath.Join(storeDir, MirrorsFile)}}
	}
	if len(cfg.Mirrors) == 0 {
		return nil
	}
	m := &mirroringStore{Store: st, storeDir: storeDir, entries: cfg.Mirrors, warn: io.Discard}
	_, problems, err := m.check(ctx, ids)
	if err != nil {
		return []ckpt.Problem{{Severity: "warning", What: "mirrors not checked: " + err.Error()}}
	}
	out := make([]ckpt.Problem, 0, len(problems))
	for _, p := range problems {
		out = append(out, ckpt.Problem{ID: p.ID, Severity: "warning", What: fmt.Sprintf("%s mirror %s: %s", p.Format, p.Path, p.What), Repair: p.Repair})
	}
	return out
}

// repairMirrors is ckpt repair's part for mirrors: it rewrites every mirror
// file check finds wrong and reports each as fixed when it matches after.
// A plan.md edited since its last sync stays as it is (plan.md is the
// source of truth) and is reported with its repair, ckpt plan sync.
func repairMirrors(ctx context.Context, st ckpt.Store, storeDir string, ids []string, warn io.Writer, now func() time.Time) []ckpt.Problem {
	found := mirrorFindings(ctx, st, storeDir, ids)
	if len(found) == 0 {
		return nil
	}
	cfg, err := readMirrors(storeDir)
	if err != nil {
		return found
	}
	m := &mirroringStore{Store: st, storeDir: storeDir, entries: cfg.Mirrors, warn: warn, now: now}
	var redo []string
	for _, p := range found {
		if p.ID != "" && !slices.Contains(redo, p.ID) {
			redo = append(redo, p.ID)
		}
	}
	if _, _, err := m.syncAll(ctx, redo); err != nil {
		return found
	}
	left := mirrorFindings(ctx, st, storeDir, redo)
	for i := range found {
		found[i].Fixed = !slices.ContainsFunc(left, func(l ckpt.Problem) bool { return l.ID == found[i].ID && l.What == found[i].What })
		if found[i].Fixed {
			found[i].What += " (rewritten)"
		}
	}
	return found
}
