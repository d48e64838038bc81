// Package ccc reads and writes ccc's (seed 001) session files: the handoff file
// .ccc-progress.md (its exact sections, with the "## Continuation Prompt" a
// resume command reads) and the runtime state .ccc-state.json
// (checkpointCommentId, activeTaskFiles and the stop hook's loop fields).
//
// Export and Mirror write .ccc-progress.md: it is the seed's single
// handoff artifact. .ccc-state.json belongs to ccc's stop hook; ReadState and
// WriteState let the four-step checkpoint read and update it without losing
// any field.
package ccc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols"
)

// Name is the format's name on the command line and its key in
// Checkpoint.Meta.
const Name = "ccc"

// Format is ccc's (seed 001) file pair. It has no settings; New returns it.
type Format struct{}

var _ protocols.Format = (*Format)(nil)

// New returns the format.
func New() *Format { return &Format{} }

// Name returns "ccc".
func (*Format) Name() string { return Name }

// cccMeta is what the adapter keeps in Checkpoint.Meta["ccc"]: the state
// file as read, and what a progress file had beyond the seed's layout.
type cccMeta struct {
	State    json.RawMessage `json:"state,omitempty"`
	Header   []field         `json:"header,omitempty"`
	Sections []section       `json:"sections,omitempty"`
}

// Import reads .ccc-progress.md or .ccc-state.json (told apart by content: a
// JSON object is the state). It fails only when the file holds nothing of
// either.
func (*Format) Import(path string, data []byte) (protocols.Imported, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return protocols.Imported{}, fmt.Errorf("%s is empty: give %s or %s", path, ProgressFile, StateFile)
	}
	var (
		c   *ckpt.Checkpoint
		n   jsondoc.Notes
		err error
	)
	if trimmed[0] == '{' {
		c, err = importState(trimmed, &n)
	} else {
		c, err = importProgress(data, &n)
	}
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	id := c.TaskID
	if ckpt.ValidateID(id) != nil {
		dir := filepath.Base(filepath.Dir(path))
		id = "ccc-session"
		if ckpt.ValidateID(dir) == nil && dir != "." && dir != "/" {
			id = dir
		}
		n.Add("no usable issue key: suggested ID %q", id)
	}
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

// importState maps .ccc-state.json onto a checkpoint.
func importState(data []byte, n *jsondoc.Notes) (*ckpt.Checkpoint, error) {
	s, conv, err := ParseState(data)
	if err != nil {
		return nil, err
	}
	*n = append(*n, conv...)
	anyKnown := false
	for _, sf := range stateFields {
		anyKnown = anyKnown || s.read.doc.Has(sf.key)
	}
	if !anyKnown {
		keys := s.read.doc.Keys()
		if len(keys) > 5 {
			keys = append(keys[:5:5], "…")
		}
		return nil, fmt.Errorf("none of %s's fields (linearIssue, phase, taskIndex, checkpointCommentId, activeTaskFiles, …) found, only %s: give the project's %s or %s",
			StateFile, strings.Join(keys, ", "), StateFile, ProgressFile)
	}
	c := &ckpt.Checkpoint{Resume: ckpt.Resume{Resumable: true}}
	c.TaskID = s.LinearIssue
	c.Phase = s.Phase
	if s.ExecutionMode != "" {
		c.Labels = []string{"exec:" + s.ExecutionMode}
	}
	c.Files.Modified = jsondoc.UniqueNonEmpty(s.ActiveTaskFiles)
	if s.TotalTasks > 0 || s.TaskIndex > 0 {
		done, total := s.TaskIndex, s.TotalTasks
		if done > total {
			n.Add("taskIndex %d is past totalTasks %d: read as all %d done", done, total, total)
			done = total
		}
		c.Progress.Done, c.Progress.Total = done, total
	}
	c.Cycles = ckpt.Cycles{Count: s.TaskIteration, Max: s.MaxTaskIterations}
	if t, guess, ok := jsondoc.ParseTime(s.LastUpdatedAt); ok {
		c.UpdatedAt = t
		if guess != "" {
			n.Add("lastUpdatedAt %q has %s", s.LastUpdatedAt, guess)
		}
	}
	switch gate := s.Gate(); {
	case gate != "":
		c.Status, c.StatusReason = ckpt.StatusWaiting, "awaiting gate "+gate
	case s.Phase == "closure" || (s.TotalTasks > 0 && s.TaskIndex >= s.TotalTasks):
		c.Status = ckpt.StatusDone
	default:
		c.Status = ckpt.StatusInProgress
	}
	n.Add("the state file has no status: %s follows from phase %q, the task counts and awaitingGate", c.Status, s.Phase)
	n.Add("kept as is in meta ccc.state, with no place in ckpt's model: globalIteration, maxGlobalIterations, specPath, replanCount, checkpointCommentId and any other field")
	setMeta(c, cccMeta{State: s.read.doc.Raw()})
	ckpt.Derive(c)
	return c, nil
}

// importProgress maps .ccc-progress.md onto a checkpoint.
func importProgress(md []byte, n *jsondoc.Notes) (*ckpt.Checkpoint, error) {
	p := parseProgress(md)
	if len(p.header) == 0 && len(p.order) == 0 {
		return nil, fmt.Errorf(`neither the "**Issue:**" header nor a section of %s (## Completed Tasks, ## Current Task, …, ## Continuation Prompt) found`, ProgressFile)
	}
	c := &ckpt.Checkpoint{Resume: ckpt.Resume{Resumable: true}}
	var kept cccMeta
	kept.Header = readProgressHeader(p.header, c, n)
	if c.TaskID == "" && c.Title == "" {
		n.Add(`no "**Issue:** KEY — Title" line: the issue is unknown`)
	}
	readProgressSteps(p, c)
	readProgressDecisions(p, c, n)
	blockers := readProgressBlockers(p, c, n)
	c.Status = progressStatus(c, blockers)
	n.Add("%s has no status line: %s follows from its sections", ProgressFile, c.Status)
	for _, missing := range []string{secCompleted, secCurrent, secRemaining, secDecisions, secBlockers, secPrompt} {
		if !slices.Contains(p.order, missing) {
			n.Add("no %q section", "## "+missing)
		}
	}
	ckpt.Derive(c)
	if p.prompt != "" && p.prompt != generatedPrompt(c) {
		c.Resume.Instructions = p.prompt
	}
	kept.Sections = p.extra
	noteKeptProgress(kept, n)
	if len(kept.Header) > 0 || len(kept.Sections) > 0 {
		setMeta(c, kept)
	}
	return c, nil
}

// readProgressHeader sets c's issue key, title, session start and execution
// mode label from the "**Label:** value" header lines, noting what it had to
// guess, and returns the lines it kept as they are (unknown labels and a
// Session that is not a time), in their order.
func readProgressHeader(header []field, c *ckpt.Checkpoint, n *jsondoc.Notes) []field {
	var kept []field
	for _, f := range header {
		switch strings.ToLower(f.Label) {
		case "issue":
			c.TaskID, c.Title = issueParts(f.Value)
		case "session":
			if t, guess, ok := jsondoc.ParseTime(f.Value); ok {
				c.Session.StartedAt = t
				if guess != "" {
					n.Add("Session %q has %s", f.Value, guess)
				}
			} else {
				n.Add("Session %q is not a time: kept as a header line", f.Value)
				kept = append(kept, f)
			}
		case "execution mode":
			mode := strings.TrimSpace(f.Value)
			if jsondoc.IsNone(mode) {
				continue // "—": no mode recorded
			}
			if !strings.HasPrefix(mode, "exec:") {
				mode = "exec:" + mode
			}
			c.Labels = append(c.Labels, mode)
		default:
			kept = append(kept, f)
		}
	}
	return kept
}

// readProgressSteps appends c's steps from the Completed, Current and
// Remaining sections, in that order, with IDs unique across all three, and
// sets c.CurrentStep to the first current task still in progress.
func readProgressSteps(p progress, c *ckpt.Checkpoint) {
	ids := jsondoc.StepIDs{}
	for _, it := range realItems(p.sections[secCompleted]) {
		st := ckpt.StepDone
		title := strings.TrimSpace(strings.TrimSuffix(it, "(skipped)"))
		if title != it {
			st = ckpt.StepSkipped
		}
		title = strings.TrimSpace(title)
		for _, mark := range []string{"✓", "✔", "✅"} {
			if t, ok := strings.CutSuffix(title, mark); ok {
				title = strings.TrimSpace(t)
				break
			}
		}
		c.Steps = append(c.Steps, ckpt.Step{ID: ids.Make(title), Title: title, Status: st})
	}
	for _, it := range realItems(p.sections[secCurrent]) {
		title, state := it, ""
		if i := strings.LastIndex(it, " — "); i >= 0 {
			title, state = strings.TrimSpace(it[:i]), strings.TrimSpace(it[i+len(" — "):])
		}
		s := ckpt.Step{ID: ids.Make(title), Title: title, Status: ckpt.StepInProgress}
		switch {
		case state == "failed" || strings.HasPrefix(state, "failed: "):
			s.Status, s.Notes = ckpt.StepFailed, strings.TrimPrefix(strings.TrimPrefix(state, "failed"), ": ")
		case state != "" && state != "in progress":
			s.Notes = state
		}
		c.Steps = append(c.Steps, s)
		if c.CurrentStep == "" && s.Status == ckpt.StepInProgress {
			c.CurrentStep = title
		}
	}
	for _, it := range realItems(p.sections[secRemaining]) {
		c.Steps = append(c.Steps, ckpt.Step{ID: ids.Make(it), Title: it, Status: ckpt.StepPending})
	}
}

// readProgressDecisions appends the "text: reason" items of the Decisions
// section to c.Decisions and notes that their time is unknown.
func readProgressDecisions(p progress, c *ckpt.Checkpoint, n *jsondoc.Notes) {
	decisions := realItems(p.sections[secDecisions])
	for _, it := range decisions {
		text, reason, _ := strings.Cut(it, ": ")
		c.Decisions = append(c.Decisions, ckpt.Decision{Text: strings.TrimSpace(text), Reason: strings.TrimSpace(reason)})
	}
	if len(decisions) > 0 {
		n.Add("decisions carry no time in %s: their time is unknown", ProgressFile)
	}
}

// readProgressBlockers appends the Blockers section's items to c.Blockers as
// b1, b2, …, notes that their start is unknown, and returns how many there were.
func readProgressBlockers(p progress, c *ckpt.Checkpoint, n *jsondoc.Notes) int {
	blockers := realItems(p.sections[secBlockers])
	for i, it := range blockers {
		c.Blockers = append(c.Blockers, ckpt.Blocker{ID: fmt.Sprintf("b%d", i+1), Text: it})
	}
	if len(blockers) > 0 {
		n.Add("blockers carry no start time in %s: their start is unknown", ProgressFile)
	}
	return len(blockers)
}

// progressStatus is the status a progress file implies, having no status
// line: blocked with any blocker, done when every step is finished, else in
// progress.
func progressStatus(c *ckpt.Checkpoint, blockers int) ckpt.Status {
	switch {
	case blockers > 0:
		return ckpt.StatusBlocked
	case len(c.Steps) > 0 && !slices.ContainsFunc(c.Steps, func(s ckpt.Step) bool { return !s.Status.Finished() }):
		return ckpt.StatusDone
	default:
		return ckpt.StatusInProgress
	}
}

// noteKeptProgress notes the header lines (but Session, noted when read) and
// the sections kept in meta because ckpt's model has no place for them.
func noteKeptProgress(kept cccMeta, n *jsondoc.Notes) {
	var labels []string
	for _, f := range kept.Header {
		if !strings.EqualFold(f.Label, "session") { // already said above
			labels = append(labels, f.Label)
		}
	}
	if len(labels) > 0 {
		n.Add("header lines kept as they are, with no place in ckpt's model: %s", strings.Join(labels, ", "))
	}
	if len(kept.Sections) > 0 {
		names := make([]string, len(kept.Sections))
		for i, s := range kept.Sections {
			names[i] = s.Heading
		}
		n.Add("sections kept as they are, with no place in ckpt's model: %s", strings.Join(names, ", "))
	}
}

// realItems drops the "None" placeholder of an empty section.
func realItems(list []string) []string {
	var out []string
	for _, it := range list {
		if !jsondoc.IsNone(it) {
			out = append(out, it)
		}
	}
	return out
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func setMeta(c *ckpt.Checkpoint, m cccMeta) {
	if c.Meta == nil {
		c.Meta = map[string]json.RawMessage{}
	}
	c.Meta[Name] = jsondoc.Encode(m)
}

func getMeta(c *ckpt.Checkpoint) (cccMeta, error) {
	var m cccMeta
	raw, ok := c.Meta[Name]
	if !ok {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("meta %q is not the record ckpt keeps for %s (%v): remove it with ckpt update %s --meta %s=null", Name, ProgressFile, err, c.ID, Name)
	}
	return m, nil
}

// Export renders c as .ccc-progress.md in the seed's layout; header lines and
// sections an imported progress file had beyond that layout are written back.
func (*Format) Export(c *ckpt.Checkpoint) ([]byte, error) {
	m, err := getMeta(c)
	if err != nil {
		return nil, err
	}
	return renderProgress(c, keptMarkdown{Header: m.Header, Sections: m.Sections}), nil
}

// ExportAt is Export for the project at root: a checkpoint without a task
// ID takes the issue key its project's .ccc-state.json names
// (linearIssue), so **Issue:** reads "CIA-123 — Title" as the seed's
// /ccc:go expects, not the checkpoint's ID. Mirror writes this, and ckpt
// mirror check compares with it.
func (f *Format) ExportAt(root string, c *ckpt.Checkpoint) ([]byte, error) {
	if c.TaskID == "" {
		if st, err := ReadState(filepath.Join(root, StateFile)); err == nil && strings.TrimSpace(st.LinearIssue) != "" {
			cc := *c
			cc.TaskID = strings.TrimSpace(st.LinearIssue)
			c = &cc
		}
	}
	return f.Export(c)
}

// Mirror writes c to <root>/.ccc-progress.md durably (as ExportAt).
func (f *Format) Mirror(root string, c *ckpt.Checkpoint) error {
	data, err := f.ExportAt(root, c)
	if err != nil {
		return err
	}
	path := filepath.Join(root, ProgressFile)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("mirroring %s: %w", c.ID, err)
	}
	return nil
}
