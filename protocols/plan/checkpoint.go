package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Meta keys of a checkpoint made from a plan.
const (
	// MetaPlan holds {"planId","planPath","checksum"}: where the checkpoint
	// came from. Its presence marks plan.md as the checkpoint's source of
	// truth, which Mirror respects.
	MetaPlan = "plan"
	// MetaFields holds the plan's "**Key:** value" lines as
	// [{"key","value"}], so that Export writes them back.
	MetaFields = "plan_fields"
	// MetaPhases holds the plan's phase headings as [{"id","title"}]
	// ("## Phase 1: Setup" for phase-1-setup), so that Export writes the
	// plan's own headings back, not the phase IDs.
	MetaPhases = "plan_phases"
)

type phaseMeta struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// planMeta is the value of MetaPlan.
type planMeta struct {
	PlanID   string `json:"planId,omitempty"`
	PlanPath string `json:"planPath,omitempty"`
	Checksum string `json:"checksum,omitempty"`
}

type fieldMeta struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// ToCheckpoint maps a plan and its state onto the ckpt model: tasks become
// steps (Phase = the phase ID, checked = done), acceptance criteria become
// acceptance, the DECISION and BLOCKER markers decisions and blockers, and
// the status follows the tasks: all checked is done, some is in_progress,
// none is pending, and any BLOCKER marker makes an unfinished plan blocked.
// Times and authors come from s, which may be nil (nothing known).
func ToCheckpoint(p *Plan, s *State, id string) *ckpt.Checkpoint {
	c := &ckpt.Checkpoint{
		ID:        id,
		Title:     p.Title,
		Resume:    ckpt.Resume{Resumable: true},
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(ckpt.DefaultInterval)},
		Meta:      map[string]json.RawMessage{},
	}
	var last *time.Time
	c.Steps, last = planSteps(p, s)
	for _, a := range p.Acceptance() {
		cr := ckpt.Criterion{ID: a.ID, Title: a.Title, Met: a.Checked}
		if cs := s.criterion(phaseKey(a.Phase), a.ID); cs != nil && a.Checked {
			cr.VerifiedAt = cs.VerifiedAt
		}
		c.Acceptance = append(c.Acceptance, cr)
	}
	c.Decisions = planDecisions(p, s)
	c.Blockers = planBlockers(p, s)
	setPlanStatus(c, last)
	for _, t := range p.Tasks() {
		if !t.Checked {
			c.Phase, c.CurrentStep = t.Phase, t.Title
			break
		}
	}
	setPlanMeta(c, p, s)
	return c
}

// planSteps returns one step per task of p, in order, done when checked,
// with its completion time and author from s (which may be nil), and the
// latest completion time among them (nil when none is known).
func planSteps(p *Plan, s *State) ([]ckpt.Step, *time.Time) {
	var steps []ckpt.Step
	var last *time.Time
	for _, t := range p.Tasks() {
		st := ckpt.Step{ID: t.ID, Title: t.Title, Phase: t.Phase, Status: ckpt.StepPending}
		if t.Checked {
			st.Status = ckpt.StepDone
			if ts := s.taskIn(t.Phase, t.ID); ts != nil {
				st.CompletedAt, st.By = ts.CompletedAt, ts.CompletedBy
				if ts.CompletedAt != nil && (last == nil || ts.CompletedAt.After(*last)) {
					last = ts.CompletedAt
				}
			}
		}
		steps = append(steps, st)
	}
	return steps, last
}

// planDecisions returns the state's decisions, with their times and
// reasons, or without a state the plan's DECISION markers as text only.
func planDecisions(p *Plan, s *State) []ckpt.Decision {
	var out []ckpt.Decision
	if s != nil {
		for _, d := range s.Decisions {
			out = append(out, ckpt.Decision{At: d.Time, Text: d.Decision, Reason: d.Reason})
		}
	} else {
		for _, d := range p.Decisions {
			out = append(out, ckpt.Decision{Text: d.Text})
		}
	}
	return out
}

// planBlockers returns the plan's distinct BLOCKER markers as b1, b2, …, in
// order, each since the time s recorded it (zero when s is nil or has none).
func planBlockers(p *Plan, s *State) []ckpt.Blocker {
	var out []ckpt.Blocker
	seen := map[string]bool{}
	for _, b := range p.Blockers {
		if seen[b.Text] {
			continue
		}
		seen[b.Text] = true
		bl := ckpt.Blocker{ID: "b" + strconv.Itoa(len(out)+1), Text: b.Text}
		if s != nil && s.Ckpt != nil {
			bl.Since = s.Ckpt.BlockersSince[b.Text]
		}
		out = append(out, bl)
	}
	return out
}

// setPlanStatus sets c's progress from its done steps and its status as
// ToCheckpoint describes; a done plan is completed at last.
func setPlanStatus(c *ckpt.Checkpoint, last *time.Time) {
	done := 0
	for _, st := range c.Steps {
		if st.Status == ckpt.StepDone {
			done++
		}
	}
	c.Progress = ckpt.Progress{Done: done, Total: len(c.Steps), Percent: percentage(done, len(c.Steps))}
	switch {
	case len(c.Steps) > 0 && done == len(c.Steps):
		c.Status = ckpt.StatusDone
		c.CompletedAt = last
	case len(c.Blockers) > 0:
		c.Status = ckpt.StatusBlocked
	case done > 0:
		c.Status = ckpt.StatusInProgress
	default:
		c.Status = ckpt.StatusPending
	}
}

// setPlanMeta records in c.Meta the plan's identity from s (empty when s is
// nil) and p's "**Key:** value" fields, and takes c's update time and
// session notes from s.
func setPlanMeta(c *ckpt.Checkpoint, p *Plan, s *State) {
	meta := planMeta{}
	if s != nil {
		meta = planMeta{PlanID: s.PlanID, PlanPath: s.PlanPath, Checksum: s.Checksum}
		c.UpdatedAt = s.LastCheckpoint
		if s.SessionNotes != nil {
			c.Context.Notes = *s.SessionNotes
		}
	}
	c.Meta[MetaPlan], _ = json.Marshal(meta)
	var phases []phaseMeta
	for _, ph := range p.Phases {
		if ph.ID != "" && strings.TrimSpace(ph.Title) != "" {
			phases = append(phases, phaseMeta{ID: ph.ID, Title: strings.TrimSpace(ph.Title)})
		}
	}
	if len(phases) > 0 {
		c.Meta[MetaPhases], _ = json.Marshal(phases)
	}
	if len(p.Fields) > 0 {
		fields := make([]fieldMeta, len(p.Fields))
		for i, f := range p.Fields {
			fields[i] = fieldMeta{Key: f.Key, Value: f.Value}
		}
		c.Meta[MetaFields], _ = json.Marshal(fields)
	}
}

// taskIn returns the state of a task in its phase, or nil.
func (s *State) taskIn(phase, id string) *TaskState {
	if s == nil || s.Phases[phaseKey(phase)] == nil {
		return nil
	}
	return s.Phases[phaseKey(phase)].Tasks[id]
}

// knownFromCheckpoint takes completion times, authors and decision times
// from a checkpoint, for Mirror.
func knownFromCheckpoint(c *ckpt.Checkpoint) known {
	k := known{tasks: map[string]TaskState{}, criteria: map[string]time.Time{}, phases: map[string]time.Time{}, decided: map[string]time.Time{}}
	for _, st := range c.Steps {
		if st.Status.Finished() {
			k.tasks[st.ID] = TaskState{Done: true, CompletedAt: st.CompletedAt, CompletedBy: st.By}
		}
	}
	for _, a := range c.Acceptance {
		if a.Met && a.VerifiedAt != nil {
			k.criteria[a.ID] = *a.VerifiedAt
		}
	}
	for _, d := range c.Decisions {
		if _, ok := k.decided[d.Text]; !ok && !d.At.IsZero() {
			k.decided[d.Text] = d.At
		}
	}
	return k
}

// mergeKnown fills what a does not know from b.
func mergeKnown(a, b known) known {
	if a.tasks == nil {
		return b
	}
	for id, t := range b.tasks {
		if _, ok := a.tasks[id]; !ok {
			a.tasks[id] = t
		}
	}
	for id, t := range b.criteria {
		if _, ok := a.criteria[id]; !ok {
			a.criteria[id] = t
		}
	}
	for id, t := range b.decided {
		if _, ok := a.decided[id]; !ok {
			a.decided[id] = t
		}
	}
	return a
}

// suggestDirID is the checkpoint ID of the plan in directory dir: the
// directory's name, made a valid ID.
func suggestDirID(dir string) string {
	return sanitizeID(filepath.Base(dir))
}

// SuggestID guesses the checkpoint ID of a plan file, and says how:
// plans/<plan-id>/plan.md is <plan-id>; any other file in plans/<plan-id>/
// (a phase file) is <plan-id>/<file name without .md>, with parent
// <plan-id>; otherwise the plan's **Plan ID:** field, or the file name
// without ".md" and ".plan".
func SuggestID(path string, p *Plan) (id, parent, how string) {
	path = filepath.Clean(path)
	base, dir := filepath.Base(path), filepath.Dir(path)
	dirName := filepath.Base(dir)
	usableDir := dir != "." && dirName != string(filepath.Separator) && dirName != "." && sanitizeID(dirName) != "plan"
	stem := strings.TrimSuffix(strings.TrimSuffix(base, filepath.Ext(base)), ".plan")
	switch {
	case strings.EqualFold(base, "plan.md") && usableDir:
		return sanitizeID(dirName), "", "from its directory " + dirName
	case filepath.Base(filepath.Dir(dir)) == "plans" && usableDir:
		parent = sanitizeID(dirName)
		return parent + "/" + sanitizeID(stem), parent, "from its plan directory " + dirName + " and its file name"
	}
	if p != nil {
		if v, ok := p.Field("Plan ID"); ok && v != "" {
			return sanitizeID(v), "", "from its **Plan ID:** line"
		}
	}
	return sanitizeID(stem), "", "from its file name"
}

// sanitizeID makes s a valid checkpoint ID segment, different for
// different s: a valid segment is kept as it is; any other gets its
// characters outside [A-Za-z0-9._-] replaced by '-' and, so that names
// differing only in those characters ("Süd" and "Såd", "a b" and "a-b")
// never share a checkpoint, "-" and 8 hex digits of its SHA-256.
func sanitizeID(s string) string {
	if len(s) <= maxSegment && ckpt.ValidateID(s) == nil && !strings.Contains(s, "/") {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return cleanSegment(s, maxSegment-9) + "-" + hex.EncodeToString(sum[:4])
}

// maxSegment is the longest ID segment a plan's name becomes.
const maxSegment = 100

// cleanSegment makes s a valid ID segment of at most max bytes: characters
// outside [A-Za-z0-9._-] become '-', and an empty or dot-only result is
// "plan". Different s can give the same result.
func cleanSegment(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > max {
		out = strings.TrimRight(out[:max], "-")
	}
	if strings.Trim(out, ".") == "" {
		return "plan"
	}
	return out
}
