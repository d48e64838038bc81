package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
)

// Problem is one mirror file that does not match its checkpoint, or a
// temporary file an interrupted write left beside one.
type Problem struct {
	Format string `json:"format"`
	Root   string `json:"root"`
	ID     string `json:"id"`
	Path   string `json:"path,omitempty"`
	What   string `json:"what"`
	Repair string `json:"repair"`
	// leftover marks a temporary file to remove, not a file to rewrite.
	leftover bool
}

// String is p on one line: format, checkpoint, file, what is wrong and
// the repair, as ckpt mirror check prints it.
func (p Problem) String() string {
	return fmt.Sprintf("%s %s: %s: %s (repair: %s)", p.Format, p.ID, p.Path, p.What, p.Repair)
}

// selected returns the checkpoints named by ids (all when ids is empty,
// archived ones included) that at least one entry selects.
func (m *Store) selected(ctx context.Context, ids []string) ([]*ckpt.Checkpoint, error) {
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

// SyncAll writes every mirror of the checkpoints ids (all when empty) and
// counts the checkpoints written in full and those with a mirror that
// failed (each failure is a warning).
func (m *Store) SyncAll(ctx context.Context, ids []string) (written, failed int, err error) {
	cs, err := m.selected(ctx, ids)
	if err != nil {
		return 0, 0, err
	}
	for _, c := range cs {
		ok := true
		for _, e := range m.entries {
			if !e.Selects(c.ID) {
				continue
			}
			if err := m.writeEntry(ctx, e, c, nil); err != nil {
				warn(m.opts, fmt.Sprintf("mirror %s of %s under %s not written: %v", e.Format, c.ID, m.list.RootDir(e), err))
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

// Check compares every mirror file of the checkpoints ids (all when empty)
// with its checkpoint, and finds the temporary files interrupted writes
// left beside them. It writes nothing. checked counts the mirror files.
func (m *Store) Check(ctx context.Context, ids []string) (checked int, problems []Problem, err error) {
	cs, err := m.selected(ctx, ids)
	if err != nil {
		return 0, nil, err
	}
	owner := map[string]string{} // mirror file → the checkpoint writing it
	dirs := map[string]bool{}
	for _, e := range m.entries {
		if e.Unbound() {
			problems = append(problems, Problem{Format: e.Format, Root: m.list.RootDir(e), What: "the mirror selects " + e.Selector() + ", and .ccc-progress.md is one file per project: it writes nothing", Repair: e.unboundHint()})
		}
	}
	for _, c := range cs {
		for _, e := range m.entries {
			if !e.Selects(c.ID) || e.Unbound() || isArchiveCopy(c) && e.Format != agentcheckpoints.Name {
				continue
			}
			checked++
			p := m.checkOne(e, c)
			if p == nil {
				path, _ := Path(e.Format, m.list.RootDir(e), c)
				p = m.collision(owner, e, c, path)
			}
			if p != nil {
				problems = append(problems, *p)
			}
			if p := m.staleLock(e, c); p != nil {
				problems = append(problems, *p)
			}
			problems = append(problems, m.leftovers(e, c, dirs)...)
		}
	}
	return checked, problems, nil
}

// collision reports c's file of e when another checkpoint writes the same
// file (a seed format with one file per task, two checkpoints of one
// track): whichever was written last wins, so one of them is always out of
// step.
func (m *Store) collision(owner map[string]string, e Entry, c *ckpt.Checkpoint, path string) *Problem {
	if path == "" || e.Format == ccc.Name || e.Format == sitebuilder.Name && c.Archived != nil {
		// .ccc-progress.md is one file per project by design, and a
		// completed sitebuilder file sits beside the live one.
		return nil
	}
	if other, ok := owner[path]; ok && other != c.ID {
		return &Problem{Format: e.Format, Root: m.list.RootDir(e), ID: c.ID, Path: path,
			What: "the same file as " + other + ": each overwrites the other", Repair: "mirror the two under different roots, or give them the IDs the format needs to name two files"}
	}
	owner[path] = c.ID
	return nil
}

// checkOne compares c's file of entry e with c. Both sides are read with
// the format's own Import (the file on disk, and the file Export would
// write), so only what the format carries is compared, and fields other
// tools add are not mistaken for drift.
func (m *Store) checkOne(e Entry, c *ckpt.Checkpoint) *Problem {
	root := m.list.RootDir(e)
	p := &Problem{Format: e.Format, Root: root, ID: c.ID, Repair: "ckpt mirror sync " + c.ID}
	if err := e.Check(); err != nil {
		p.What, p.Repair = err.Error(), "fix the root in the mirror list (ckpt mirror rm, then ckpt mirror add)"
		return p
	}
	f, err := m.format(e.Format)
	if err != nil {
		p.What = err.Error()
		return p
	}
	path, err := Path(e.Format, root, c)
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
	want, err := exportAt(f, root, c)
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

// Path is the file format writes for c under root.
func Path(format, root string, c *ckpt.Checkpoint) (string, error) {
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
	// What a resume starts from: a write the mirror missed (a lock held
	// too long) shows here even when no step moved.
	add("current step", want.CurrentStep, got.CurrentStep)
	add("last processed", want.Context.LastProcessed, got.Context.LastProcessed)
	add("next to process", want.Context.NextToProcess, got.Context.NextToProcess)
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
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return "[" + s + "]"
}

// Findings are ckpt check's findings about the mirrors of list over st
// (docs/design.md's SHOULD 9): one warning per mirror file of the
// checkpoints ids (all when empty) that is missing or does not match its
// checkpoint, per temporary file left by an interrupted write, and one for
// a damaged mirror list. It writes nothing.
func Findings(ctx context.Context, st ckpt.Store, list List, ids []string) []ckpt.Problem {
	found, _ := findings(ctx, st, list, ids)
	return found
}

func findings(ctx context.Context, st ckpt.Store, list List, ids []string) ([]ckpt.Problem, []Problem) {
	cfg, err := list.Read()
	if err != nil {
		return []ckpt.Problem{{Severity: ckpt.SeverityWarning, What: "mirror list: " + err.Error(), Repair: "fix or remove " + list.File}}, nil
	}
	if len(cfg.Mirrors) == 0 {
		return nil, nil
	}
	m := New(st, list, cfg.Mirrors, Options{})
	_, problems, err := m.Check(ctx, ids)
	if err != nil {
		return []ckpt.Problem{{Severity: ckpt.SeverityWarning, What: "mirrors not checked: " + err.Error()}}, nil
	}
	out := make([]ckpt.Problem, 0, len(problems))
	for _, p := range problems {
		out = append(out, ckpt.Problem{ID: p.ID, Severity: ckpt.SeverityWarning, What: fmt.Sprintf("%s mirror %s: %s", p.Format, p.Path, p.What), Repair: p.Repair})
	}
	return out, problems
}

// Repair is ckpt repair's part for mirrors: it removes the temporary files
// interrupted writes left, rewrites every mirror file Check finds wrong,
// and reports each finding as fixed when Check no longer finds it. A
// plan.md edited since its last sync stays as it is (plan.md is the source
// of truth) and is reported with its repair, ckpt plan sync.
func Repair(ctx context.Context, st ckpt.Store, list List, ids []string, opts Options) []ckpt.Problem {
	found, problems := findings(ctx, st, list, ids)
	if len(problems) == 0 {
		return found
	}
	cfg, err := list.Read()
	if err != nil {
		return found
	}
	m := New(st, list, cfg.Mirrors, opts)
	var redo []string
	for _, p := range problems {
		if p.leftover {
			if err := os.Remove(p.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				warn(opts, fmt.Sprintf("%s not removed: %v", p.Path, err))
			}
			continue
		}
		if p.ID != "" && !slices.Contains(redo, p.ID) {
			redo = append(redo, p.ID)
		}
	}
	if len(redo) > 0 {
		if _, _, err := m.SyncAll(ctx, redo); err != nil {
			return found
		}
	}
	left := Findings(ctx, st, list, ids)
	for i := range found {
		found[i].Fixed = !slices.ContainsFunc(left, func(l ckpt.Problem) bool { return l.ID == found[i].ID && l.What == found[i].What })
		if found[i].Fixed {
			if problems[i].leftover {
				found[i].What += " (removed)"
			} else {
				found[i].What += " (rewritten)"
			}
		}
	}
	return found
}

// exportAt is what f's Mirror writes for c under root: ExportAt where the
// format reads its project to write (ccc's .ccc-state.json), else Export.
func exportAt(f protocols.Format, root string, c *ckpt.Checkpoint) ([]byte, error) {
	if at, ok := f.(interface {
		ExportAt(root string, c *ckpt.Checkpoint) ([]byte, error)
	}); ok {
		return at.ExportAt(root, c)
	}
	return f.Export(c)
}
