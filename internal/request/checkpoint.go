package request

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Start creates a checkpoint with its plan: the created event.
type Start struct {
	Title, TaskID, Stage, Phase string
	Parent                      string // "" for none
	Status                      string // a status word (ParseStatus); "" is in_progress
	Agent                       ckpt.Agent
	Session                     string      // the session's ID; "" records none
	Steps                       []ckpt.Step // ID and Title; each starts pending
	Accept                      []ckpt.Criterion
	Interval                    string // a Go duration; "" is the default
	Labels                      []string
	Meta                        map[string]json.RawMessage
	MaxCycles                   int // 0: no limit
}

// Build implements Request. Step IDs must be unique.
func (r Start) Build(n Names) (ckpt.EventType, any, error) {
	var cr ckpt.Created
	p := &cr.Patch
	p.Title, p.TaskID, p.Stage, p.Phase = optional(r.Title), optional(r.TaskID), optional(r.Stage), optional(r.Phase)
	if err := setParent(p, optional(r.Parent), n); err != nil {
		return "", nil, err
	}
	if err := setStatus(p, optional(r.Status), n); err != nil {
		return "", nil, err
	}
	if err := setInterval(p, optional(r.Interval), n); err != nil {
		return "", nil, err
	}
	if r.MaxCycles < 0 {
		return "", nil, invalid("%s %d: give 0 (no limit) or more", n.of("max_cycles"), r.MaxCycles)
	}
	if r.MaxCycles > 0 {
		p.MaxCycles = &r.MaxCycles
	}
	p.AddLabels, p.Meta = nonEmpty(r.Labels), r.Meta
	if r.Agent != (ckpt.Agent{}) {
		a := r.Agent
		p.Agent = &a
	}
	seen := map[string]bool{}
	for _, s := range r.Steps {
		if strings.TrimSpace(s.ID) == "" {
			return "", nil, invalid("%s: a step has no ID: give each step one, e.g. research", n.of("step"))
		}
		if seen[s.ID] {
			return "", nil, invalid("%s %q is given twice: step IDs must be unique", n.of("step"), s.ID)
		}
		seen[s.ID] = true
		cr.Steps = append(cr.Steps, ckpt.Step{ID: s.ID, Title: s.Title, Status: ckpt.StepPending})
	}
	for _, a := range r.Accept {
		cr.Acceptance = append(cr.Acceptance, ckpt.Criterion{ID: a.ID, Title: a.Title})
	}
	cr.Session = ckpt.Session{ID: r.Session}
	return ckpt.EventCreated, cr, nil
}

// Update changes fields of a checkpoint in one event. A nil pointer leaves
// its field alone; a set one (even to "") sets it.
type Update struct {
	Title, TaskID, Stage, Phase, CurrentStep *string
	Status                                   *string // a status word (ParseStatus)
	StatusReason                             *string
	Progress                                 *ckpt.ProgressSet // for work without steps
	Parent                                   *string           // "" clears it

	FilesCreated, FilesModified []string // added; blank entries dropped
	AddLabels, RemoveLabels     []string

	LastProcessed, NextToProcess, Notes *string
	LastMessage                         *string // where the agent stopped
	Resumable                           *bool
	Instructions                        *string
	NextSteps                           *[]string // replaces the list; blank entries dropped

	Interval     *string // a Go duration
	MaxCycles    *int    // 0: no limit
	Meta         map[string]json.RawMessage
	ReviewScores map[string]*float64

	// Assign replaces the recorded agent with this ID, AgentType and
	// AgentName (which need it).
	Assign, AgentType, AgentName *string
}

// Build implements Request: an update that changes nothing is ErrEmpty.
func (r Update) Build(n Names) (ckpt.EventType, any, error) {
	p := ckpt.Patch{
		Title: r.Title, TaskID: r.TaskID, Stage: r.Stage, Phase: r.Phase, CurrentStep: r.CurrentStep,
		StatusReason: r.StatusReason, LastProcessed: r.LastProcessed, NextToProcess: r.NextToProcess,
		Notes: r.Notes, LastMessage: r.LastMessage, Resumable: r.Resumable, Instructions: r.Instructions,
		AddLabels: nonEmpty(r.AddLabels), RemoveLabels: nonEmpty(r.RemoveLabels),
		FilesCreated: nonEmpty(r.FilesCreated), FilesModified: nonEmpty(r.FilesModified),
		Meta: r.Meta, ReviewScores: r.ReviewScores,
	}
	if err := setStatus(&p, r.Status, n); err != nil {
		return "", nil, err
	}
	if err := setParent(&p, r.Parent, n); err != nil {
		return "", nil, err
	}
	if err := setInterval(&p, r.Interval, n); err != nil {
		return "", nil, err
	}
	if r.Progress != nil {
		if !checkProgress(*r.Progress) {
			return "", nil, invalid("%s %d/%d: give whole numbers with 0 <= done <= total", n.of("progress"), r.Progress.Done, r.Progress.Total)
		}
		p.Progress = r.Progress
	}
	if r.NextSteps != nil {
		steps := nonEmpty(*r.NextSteps)
		if steps == nil {
			steps = []string{}
		}
		p.NextSteps = &steps
	}
	if r.MaxCycles != nil {
		if *r.MaxCycles < 0 {
			return "", nil, invalid("%s %d: give 0 (no limit) or more", n.of("max_cycles"), *r.MaxCycles)
		}
		p.MaxCycles = r.MaxCycles
	}
	switch {
	case r.Assign != nil:
		a := ckpt.Agent{ID: *r.Assign}
		if r.AgentType != nil {
			a.Type = *r.AgentType
		}
		if r.AgentName != nil {
			a.Name = *r.AgentName
		}
		p.Agent = &a
	case r.AgentType != nil || r.AgentName != nil:
		return "", nil, invalid("%s and %s need %s AGENT: the agent record is replaced whole", n.of("agent_type"), n.of("agent_name"), n.of("assign"))
	}
	if isEmptyPatch(p) {
		return "", nil, invalid("%w", ErrEmpty)
	}
	return ckpt.EventUpdate, p, nil
}

// CheckProgress refuses (ErrInvalid, ckpt.CheckProgressPatch) an update
// that sets progress on checkpoint id when it has steps: its progress is
// derived from them and the figure would be ignored. Only an update that
// sets progress reads the checkpoint; one that does not exist is left to
// the append to report.
func (r Update) CheckProgress(ctx context.Context, st ckpt.Store, id string) error {
	if r.Progress == nil {
		return nil
	}
	c, err := st.Get(ctx, id, 0)
	if errors.Is(err, ckpt.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return ckpt.CheckProgressPatch(c, ckpt.Patch{Progress: r.Progress})
}

func setStatus(p *ckpt.Patch, word *string, n Names) error {
	if word == nil {
		return nil
	}
	s, err := ParseStatus(n.of("status"), *word)
	if err != nil {
		return err
	}
	p.Status = &s
	return nil
}

func setParent(p *ckpt.Patch, parent *string, n Names) error {
	if parent == nil {
		return nil
	}
	if *parent != "" {
		if err := ckpt.ValidateID(*parent); err != nil {
			return fmtField(n.of("parent"), err)
		}
	}
	p.Parent = parent
	return nil
}

func setInterval(p *ckpt.Patch, interval *string, n Names) error {
	if interval == nil {
		return nil
	}
	d, err := ParseInterval(n.of("interval"), *interval)
	if err != nil {
		return err
	}
	p.Interval = &d
	return nil
}

func isEmptyPatch(p ckpt.Patch) bool {
	return p.Title == nil && p.TaskID == nil && p.Parent == nil && p.Stage == nil && p.Phase == nil &&
		p.CurrentStep == nil && p.Status == nil && p.StatusReason == nil && p.Agent == nil && p.Progress == nil &&
		len(p.AddLabels) == 0 && len(p.RemoveLabels) == 0 && len(p.FilesCreated) == 0 && len(p.FilesModified) == 0 &&
		p.LastProcessed == nil && p.NextToProcess == nil && p.Notes == nil && p.LastMessage == nil && p.Resumable == nil &&
		p.Instructions == nil && p.NextSteps == nil && p.MaxCycles == nil && len(p.ReviewScores) == 0 &&
		len(p.Meta) == 0 && p.Interval == nil
}
