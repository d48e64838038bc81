package plan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/protocols"
)

// Format is the "plan" format: plans/<plan-id>/plan.md and its .checkpoint
// directory. The zero value is ready to use.
type Format struct{}

var _ protocols.Format = Format{}

// Name returns "plan".
func (Format) Name() string { return "plan" }

// Import reads a plan.md (or a phase file) into a checkpoint: its TASK
// markers become steps, its ACCEPT markers acceptance criteria, its
// DECISION and BLOCKER markers decisions and blockers. A plan with no TASK
// markers gets steps guessed from its unmarked checkboxes, or else from
// headings with a "**Status:** [x]" line (the superpowers plan style), and
// the warnings say so. No completion times are known. Import fails only for
// bytes that are not a text file.
func (Format) Import(path string, data []byte) (protocols.Imported, error) {
	p, err := Parse(data)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	id, parent, how := SuggestID(path, p)
	c := ToCheckpoint(p, nil, id)
	c.Parent = parent
	c.Meta[MetaPlan], _ = json.Marshal(planMeta{PlanID: strings.SplitN(id, "/", 2)[0], PlanPath: path, Checksum: Checksum(data)})
	warnings := []string{"checkpoint ID " + id + " guessed " + how}
	if c.Title == "" {
		c.Title = id
		warnings = append(warnings, "the plan has no level-1 heading; its title is its ID")
	}
	tasks := p.Tasks()
	checked := 0
	for _, t := range tasks {
		if t.Checked {
			checked++
		}
	}
	warnings = append(warnings, fmt.Sprintf("found %d phase marker(s), %d task(s) (%d checked), %d acceptance criteria, %d decision(s), %d blocker(s), %d unmarked checkbox(es)",
		countMarkedPhases(p), len(tasks), checked, len(p.Acceptance()), len(p.Decisions), len(p.Blockers), len(p.Unmarked)))
	if len(tasks) == 0 {
		steps, note := guessSteps(p)
		if len(steps) > 0 {
			c.Steps = steps
			setDerivedStatus(c)
		}
		warnings = append(warnings, note)
	} else if len(p.Unmarked) > 0 {
		warnings = append(warnings, fmt.Sprintf("%d checkbox(es) without a TASK marker were left out; add <!-- TASK: id --> to track them", len(p.Unmarked)))
	}
	warnings = append(warnings, declaredStatus(p, c)...)
	warnings = append(warnings, p.Warnings...)
	return protocols.Imported{ID: id, State: c, Warnings: warnings}, nil
}

func countMarkedPhases(p *Plan) int {
	n := 0
	for _, ph := range p.Phases {
		if ph.ID != "" {
			n++
		}
	}
	return n
}

// setDerivedStatus sets progress and status from the steps as ToCheckpoint
// does.
func setDerivedStatus(c *ckpt.Checkpoint) {
	done := 0
	for _, s := range c.Steps {
		if s.Status == ckpt.StepDone {
			done++
		}
	}
	c.Progress = ckpt.Progress{Done: done, Total: len(c.Steps), Percent: percentage(done, len(c.Steps))}
	switch {
	case done == len(c.Steps):
		c.Status = ckpt.StatusDone
	case len(c.Blockers) > 0:
		c.Status = ckpt.StatusBlocked
	case done > 0:
		c.Status = ckpt.StatusInProgress
	default:
		c.Status = ckpt.StatusPending
	}
	c.CurrentStep, c.Phase = "", ""
	for _, s := range c.Steps {
		if s.Status != ckpt.StepDone {
			c.CurrentStep, c.Phase = s.Label(), s.Phase
			break
		}
	}
}

// declaredStatus compares the plan's own **Status:** line with the status
// derived from its boxes; with no steps at all the declared one is used
// when it is a status word.
func declaredStatus(p *Plan, c *ckpt.Checkpoint) []string {
	v, ok := p.Field("Status")
	if !ok {
		return nil
	}
	word := strings.TrimFunc(v, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	st, err := ckpt.ParseStatus(word)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("the plan says **Status:** %s, which is no status ckpt knows; ckpt derives %s from its checkboxes and markers", v, c.Status)}
	case len(c.Steps) == 0:
		c.Status = st
		return []string{fmt.Sprintf("no tasks: the status %s is taken from the plan's **Status:** %s", st, v)}
	case st != c.Status:
		return []string{fmt.Sprintf("the plan says **Status:** %s but its checkboxes say %s (%d of %d done); ckpt keeps %s",
			v, c.Status, c.Progress.Done, c.Progress.Total, c.Status)}
	}
	return nil
}

// guessSteps makes steps for a plan without TASK markers: from its unmarked
// checkboxes, or else from headings followed by a **Status:** line.
func guessSteps(p *Plan) ([]ckpt.Step, string) {
	ids := map[string]int{}
	unique := func(id string) string {
		ids[id]++
		if n := ids[id]; n > 1 {
			return fmt.Sprintf("%s-%d", id, n)
		}
		return id
	}
	var steps []ckpt.Step
	if len(p.Unmarked) > 0 {
		done := 0
		for _, it := range p.Unmarked {
			st := ckpt.Step{ID: unique(slug(it.Title, "item")), Title: it.Title, Phase: it.Phase, Status: ckpt.StepPending}
			if it.Checked {
				st.Status = ckpt.StepDone
				done++
			}
			steps = append(steps, st)
		}
		return steps, fmt.Sprintf("no TASK markers: %d checkbox(es) (%d checked) imported as steps with IDs made from their text (%s…); add <!-- TASK: id --> markers to track them with ckpt plan sync",
			len(steps), done, steps[0].ID)
	}
	var parents []Heading // the enclosing headings of the current one
	done := 0
	for _, h := range p.Headings {
		for len(parents) > 0 && parents[len(parents)-1].Level >= h.Level {
			parents = parents[:len(parents)-1]
		}
		status, ok := headingStatus(h)
		if ok && h.Level > 1 { // a level-1 heading's status is the plan's own
			key, title := splitHeading(h.Text)
			st := ckpt.Step{ID: unique(slug(key, "task")), Title: title, Status: status}
			if len(parents) > 0 && parents[len(parents)-1].Level > 1 {
				k, _ := splitHeading(parents[len(parents)-1].Text)
				st.Phase = slug(k, "phase")
			}
			if status == ckpt.StepDone {
				done++
			}
			steps = append(steps, st)
		}
		parents = append(parents, h)
	}
	if len(steps) == 0 {
		return nil, "no TASK markers, no checkboxes and no headings with a **Status:** line: the checkpoint has no steps; add \"- [ ] text <!-- TASK: id -->\" items to track work"
	}
	return steps, fmt.Sprintf("no TASK markers: %d task(s) (%d done) guessed from headings with a **Status:** line, IDs from the heading before its colon (%s…), phases from the heading above; add <!-- TASK: id --> markers to track them with ckpt plan sync",
		len(steps), done, steps[0].ID)
}

// headingStatus reads the **Status:** field under a heading: "[x]", "[ ]"
// or a status word.
func headingStatus(h Heading) (ckpt.StepStatus, bool) {
	for _, f := range h.Fields {
		if !strings.EqualFold(f.Key, "Status") {
			continue
		}
		v := strings.TrimSpace(f.Value)
		switch v {
		case "[x]", "[X]":
			return ckpt.StepDone, true
		case "[ ]", "[]":
			return ckpt.StepPending, true
		}
		st, err := ckpt.ParseStatus(strings.Trim(v, "*_`[] "))
		switch {
		case err != nil:
			continue
		case st == ckpt.StatusDone:
			return ckpt.StepDone, true
		case st == ckpt.StatusInProgress:
			return ckpt.StepInProgress, true
		case st == ckpt.StatusFailed:
			return ckpt.StepFailed, true
		default:
			return ckpt.StepPending, true
		}
	}
	return "", false
}

// splitHeading splits "Task 1: Make tests hermetic" into its key and title.
func splitHeading(text string) (key, title string) {
	if k, t, ok := strings.Cut(text, ":"); ok && strings.TrimSpace(t) != "" && len(k) <= 40 {
		return strings.TrimSpace(k), strings.TrimSpace(t)
	}
	return text, text
}

// slug makes a marker ID from text: lower case letters and digits, runs of
// anything else as one '-', at most 48 bytes; def when nothing is left.
func slug(text, def string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			if b.Len() >= 48 {
				break
			}
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return def
	}
	return b.String()
}

// Mirror writes the checkpoint's plan directory under root:
// root/plans/<id>/plan.md and its .checkpoint files, durably.
//
// A checkpoint that came from a plan (Meta "plan") keeps plan.md as its
// source of truth: Mirror only ticks or unticks the boxes whose step or
// criterion changed in ckpt, and only where plan.md still shows what the
// last checkpoint (state.json) recorded, so an edit made in plan.md since
// is never overwritten. Any other checkpoint is rendered with Export. Then
// the .checkpoint bookkeeping is brought up to date as Sync does, with
// completion times and authors taken from the checkpoint.
func (f Format) Mirror(root string, c *ckpt.Checkpoint) error {
	if err := ckpt.ValidateID(c.ID); err != nil {
		return err
	}
	dir := filepath.Join(root, "plans", filepath.FromSlash(c.ID))
	planPath := filepath.Join(dir, "plan.md")
	cdir := filepath.Join(dir, CheckpointDir)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", cdir, err)
	}
	unlock, err := lockDir(cdir, 30*time.Second)
	if err != nil {
		return err
	}
	defer unlock()

	data, err := os.ReadFile(planPath)
	_, fromPlan := c.Meta[MetaPlan]
	switch {
	case err != nil && !errNotExist(err):
		return fmt.Errorf("reading %s: %w", planPath, err)
	case err == nil && fromPlan:
		if err := mirrorBoxes(planPath, cdir, data, c); err != nil {
			return err
		}
	default:
		out, err := f.Export(c)
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(planPath, out, 0o644); err != nil {
			return err
		}
	}
	at := c.UpdatedAt
	if at.IsZero() {
		at = time.Now()
	}
	if mirroredAlready(planPath, cdir, at) {
		return nil
	}
	_, err = syncLocked(planPath, at, syncConfig{by: "main", hint: c})
	return err
}

// mirroredAlready reports a checkpoint whose change state.json records
// already: its last checkpoint is the change's time and plan.md is what it
// summed. Writing it again (one change mirrored by the process that made it
// and by a server following the store) would only count a second
// checkpoint.
func mirroredAlready(planPath, cdir string, at time.Time) bool {
	b, err := os.ReadFile(filepath.Join(cdir, stateFile))
	if err != nil {
		return false
	}
	s, err := DecodeState(b)
	if err != nil || !s.LastCheckpoint.Equal(at.UTC().Truncate(time.Second)) {
		return false
	}
	data, err := os.ReadFile(planPath)
	return err == nil && Checksum(data) == s.Checksum
}

// mirrorBoxes applies the checkpoint's step and criterion states to
// plan.md's boxes, three-way: a box changes only when the checkpoint
// differs from state.json and plan.md still agrees with state.json.
func mirrorBoxes(planPath, cdir string, data []byte, c *ckpt.Checkpoint) error {
	p, err := Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", planPath, err)
	}
	base := readPrior(cdir, time.Time{}).state
	if base == nil {
		return nil // nothing to tell a plan.md edit from a ckpt change: plan.md wins
	}
	want := map[string]bool{}
	for _, s := range c.Steps {
		want["t:"+s.ID] = s.Status.Finished()
	}
	for _, a := range c.Acceptance {
		want["a:"+a.ID] = a.Met
	}
	out, changed := data, false
	apply := func(it Item, key string, recorded *bool) error {
		w, ok := want[key]
		if !ok || recorded == nil || it.Checked != *recorded || w == it.Checked {
			return nil
		}
		next, did, err := setItemBox(out, it, w)
		if err != nil {
			return err
		}
		out, changed = next, changed || did
		return nil
	}
	baseTasks := base.taskIndex()
	for _, t := range p.Tasks() {
		var rec *bool
		if ts := baseTasks[t.ID]; ts != nil {
			rec = &ts.Done
		}
		if err := apply(t, "t:"+t.ID, rec); err != nil {
			return err
		}
	}
	for _, a := range p.Acceptance() {
		var rec *bool
		if cs := base.criterion(phaseKey(a.Phase), a.ID); cs != nil {
			rec = &cs.Met
		}
		if err := apply(a, "a:"+a.ID, rec); err != nil {
			return err
		}
	}
	if !changed {
		return nil
	}
	info, err := os.Stat(planPath)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(planPath, out, info.Mode().Perm())
}
