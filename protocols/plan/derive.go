package plan

import (
	"slices"
	"strings"
	"time"
)

// changes is what a derivation found different from the previous state.
type changes struct {
	completed       []string // task IDs newly checked
	reopened        []string // task IDs unchecked again
	met             []string // criteria newly met
	phasesCompleted []string // phase keys newly completed
	decisions       []string // decision texts newly seen
	blockersAdded   []string
	blockersCleared []string
	unknownTimes    int // checked tasks whose completion time nobody knows
}

// known holds completion times learnt from elsewhere than the previous
// state: history.jsonl (after a full recovery) or the checkpoint being
// mirrored.
type known struct {
	tasks    map[string]TaskState
	criteria map[string]time.Time
	phases   map[string]time.Time
	decided  map[string]time.Time
}

// deriveInput is everything a state is derived from.
type deriveInput struct {
	plan     *Plan
	planID   string
	planPath string
	checksum string
	prev     *State // nil on the first checkpoint or after a full recovery
	known    known
	// logged holds what history.jsonl recorded already (a recovery from an
	// older recovery.json): completions of tasks and criteria in it are
	// taken with their times and not logged again.
	logged known
	// now is the time of the checkpoint being made; the zero time derives a
	// state for reading only: nothing newly seen gets a time and the
	// checkpoint count does not move.
	now    time.Time
	by     string     // completedBy of newly checked tasks
	notes  *string    // new session notes, or nil to keep the previous
	assign assignment // tasks given to an agent by this checkpoint
}

// assignment is tasks given to an agent (AssignTo).
type assignment struct {
	agent string
	tasks []string
}

// derive computes the state plan.md describes, keeping from the previous
// state what plan.md does not say: when each task was completed and by
// whom, when each criterion was verified, phase times, decision times,
// session notes, agents and unknown keys.
func derive(in deriveInput) (*State, changes) {
	var ch changes
	s := newDerivedState(in)
	prevTasks := in.prev.taskIndex()
	for _, ph := range in.plan.Phases {
		key := phaseKey(ph.ID)
		ps := s.Phases[key]
		if ps == nil {
			ps = &PhaseState{Tasks: map[string]*TaskState{}, Acceptance: map[string]*CriterionState{}}
			s.Phases[key] = ps
		}
		for _, t := range ph.Tasks {
			ps.Tasks[t.ID] = deriveTask(t, prevTasks[t.ID], in, &ch)
		}
		for _, c := range ph.Acceptance {
			ps.Acceptance[c.ID] = deriveCriterion(c, in.prev.criterion(key, c.ID), in, &ch)
		}
	}
	for _, ph := range in.plan.Phases {
		key := phaseKey(ph.ID)
		phaseTimes(s.Phases[key], in.prev, key, in, &ch)
	}

	s.Progress = StateProgress{TotalTasks: in.plan.Progress.TotalTasks, CompletedTasks: in.plan.Progress.CompletedTasks, Percentage: in.plan.Progress.Percentage}
	setCurrent(s, in.plan)
	deriveNotes(s, in.prev, in, &ch)
	deriveAgents(s, in, ch)
	return s, ch
}

// newDerivedState returns the state's frame before plan.md is read: the
// input's identity, the previous state's last checkpoint time, session notes,
// unknown keys, agents (deep copies) and checkpoint count, then the new
// checkpoint's time and count when in.now is set and the new notes when given.
func newDerivedState(in deriveInput) *State {
	prev, now := in.prev, in.now
	s := &State{
		Version:   StateVersion,
		PlanID:    in.planID,
		PlanPath:  in.planPath,
		Checksum:  in.checksum,
		Phases:    map[string]*PhaseState{},
		Blockers:  []string{},
		Decisions: []DecisionEntry{},
		Agents:    map[string]*AgentState{},
		Ckpt:      &Bookkeeping{},
	}
	if prev != nil {
		s.LastCheckpoint, s.SessionNotes, s.Extra = prev.LastCheckpoint, prev.SessionNotes, prev.Extra
		for id, a := range prev.Agents {
			c := *a
			c.AssignedTasks, c.CompletedTasks = slices.Clone(a.AssignedTasks), slices.Clone(a.CompletedTasks)
			s.Agents[id] = &c
		}
		if prev.Ckpt != nil {
			s.Ckpt.Checkpoints = prev.Ckpt.Checkpoints
		}
	}
	if !now.IsZero() {
		s.LastCheckpoint = now
		s.Ckpt.Checkpoints++
	}
	if in.notes != nil {
		s.SessionNotes = in.notes
	}
	return s
}

// nowPtr returns a fresh pointer to in.now, or nil when the state is derived
// for reading only (in.now is zero).
func (in deriveInput) nowPtr() *time.Time {
	if in.now.IsZero() {
		return nil
	}
	t := in.now
	return &t
}

// observed reports whether a change is seen between two checkpoints: there
// is a previous state and a checkpoint is being made.
func (in deriveInput) observed() bool { return in.prev != nil && !in.now.IsZero() }

// deriveTask returns task t's state given its previous state old (nil if
// none). A task checked before keeps its completion; a newly checked one
// takes its time from history.jsonl, then from in.known, then from in.now
// when observed, else counts as an unknown time. Newly checked tasks seen
// between two checkpoints go to ch.completed, unchecked ones to ch.reopened.
func deriveTask(t Item, old *TaskState, in deriveInput, ch *changes) *TaskState {
	ts := &TaskState{Done: t.Checked}
	observed := in.observed()
	switch {
	case t.Checked && old != nil && old.Done:
		ts.CompletedAt, ts.CompletedBy = old.CompletedAt, old.CompletedBy
	case t.Checked:
		if k, ok := in.logged.tasks[t.ID]; ok && k.Done {
			ts.CompletedAt, ts.CompletedBy = k.CompletedAt, k.CompletedBy
			break // completed since the state recovered from, and logged then
		}
		if k, ok := in.known.tasks[t.ID]; ok && k.Done {
			ts.CompletedAt, ts.CompletedBy = k.CompletedAt, k.CompletedBy
		} else if observed {
			ts.CompletedAt, ts.CompletedBy = in.nowPtr(), in.by
		} else {
			ch.unknownTimes++
		}
		if observed {
			ch.completed = append(ch.completed, t.ID)
		}
	case old != nil && old.Done:
		ch.reopened = append(ch.reopened, t.ID)
	}
	return ts
}

// deriveCriterion returns criterion c's state given its previous state old
// (nil if none). A criterion met before keeps its verification time; a newly
// met one takes it from history.jsonl, then from in.known, then from in.now
// when observed (going to ch.met then).
func deriveCriterion(c Item, old *CriterionState, in deriveInput, ch *changes) *CriterionState {
	cs := &CriterionState{Met: c.Checked}
	switch {
	case c.Checked && old != nil && old.Met:
		cs.VerifiedAt = old.VerifiedAt
	case c.Checked && !in.logged.criteria[c.ID].IsZero():
		k := in.logged.criteria[c.ID]
		cs.VerifiedAt = &k
	case c.Checked:
		observed := in.observed()
		if k := in.known.criteria[c.ID]; !k.IsZero() {
			cs.VerifiedAt = &k
		} else if observed {
			cs.VerifiedAt = in.nowPtr()
		}
		if observed {
			ch.met = append(ch.met, c.ID)
		}
	}
	return cs
}

// setCurrent points s at the first unchecked task and its phase or, with
// every task checked, at the first phase with items not yet completed; it
// leaves both nil when there is none. s.Phases must hold every plan phase.
func setCurrent(s *State, p *Plan) {
	for _, t := range p.Tasks() {
		if !t.Checked {
			ph, id := phaseKey(t.Phase), t.ID
			s.CurrentPhase, s.CurrentTask = &ph, &id
			break
		}
	}
	if s.CurrentPhase == nil {
		for _, ph := range p.Phases {
			if key := phaseKey(ph.ID); s.Phases[key].Status != PhaseCompleted && len(ph.Tasks)+len(ph.Acceptance) > 0 {
				s.CurrentPhase = &key
				break
			}
		}
	}
}

// phaseTimes sets a phase's status and its start and completion times.
func phaseTimes(ps *PhaseState, prev *State, key string, in deriveInput, ch *changes) {
	var pp *PhaseState
	if prev != nil {
		pp = prev.Phases[key]
	}
	done, total, met, criteria := 0, len(ps.Tasks), 0, len(ps.Acceptance)
	var first, last *time.Time
	for _, t := range ps.Tasks {
		if !t.Done {
			continue
		}
		done++
		if c := t.CompletedAt; c != nil {
			if first == nil || c.Before(*first) {
				first = c
			}
			if last == nil || c.After(*last) {
				last = c
			}
		}
	}
	for _, c := range ps.Acceptance {
		if c.Met {
			met++
		}
	}
	switch {
	case total > 0 && done == total, total == 0 && criteria > 0 && met == criteria:
		ps.Status = PhaseCompleted
	case done > 0 || met > 0:
		ps.Status = PhaseInProgress
	default:
		ps.Status = PhasePending
	}
	if ps.Status == PhasePending {
		return
	}
	if pp != nil && pp.StartedAt != nil {
		ps.StartedAt = pp.StartedAt
	} else {
		ps.StartedAt = first
	}
	if ps.Status != PhaseCompleted {
		return
	}
	switch {
	case pp != nil && pp.Status == PhaseCompleted && pp.CompletedAt != nil:
		ps.CompletedAt = pp.CompletedAt
	case !in.known.phases[key].IsZero():
		t := in.known.phases[key]
		ps.CompletedAt = &t
	case in.prev != nil && !in.now.IsZero() && (pp == nil || pp.Status != PhaseCompleted):
		t := in.now
		ps.CompletedAt = &t
		ch.phasesCompleted = append(ch.phasesCompleted, key)
	default:
		ps.CompletedAt = last
	}
}

// deriveNotes sets decisions and blockers from the plan's markers, keeping
// the time each was first seen.
func deriveNotes(s *State, prev *State, in deriveInput, ch *changes) {
	seenAt := map[string]DecisionEntry{}
	if prev != nil {
		for _, d := range prev.Decisions {
			if _, ok := seenAt[d.Decision]; !ok {
				seenAt[d.Decision] = d
			}
		}
	}
	for _, d := range in.plan.Decisions {
		if slices.ContainsFunc(s.Decisions, func(e DecisionEntry) bool { return e.Decision == d.Text }) {
			continue
		}
		e, ok := seenAt[d.Text]
		switch {
		case ok:
		case !in.known.decided[d.Text].IsZero():
			e = DecisionEntry{Time: in.known.decided[d.Text], Decision: d.Text}
		default:
			e = DecisionEntry{Time: in.now, Decision: d.Text}
			if prev != nil && !in.now.IsZero() {
				ch.decisions = append(ch.decisions, d.Text)
			}
		}
		s.Decisions = append(s.Decisions, e)
	}

	var prevSince map[string]time.Time
	if prev != nil && prev.Ckpt != nil {
		prevSince = prev.Ckpt.BlockersSince
	}
	for _, b := range in.plan.Blockers {
		if slices.Contains(s.Blockers, b.Text) {
			continue
		}
		s.Blockers = append(s.Blockers, b.Text)
		since, ok := prevSince[b.Text]
		if !ok {
			since = in.now
			if prev != nil && !in.now.IsZero() && !slices.Contains(prev.Blockers, b.Text) {
				ch.blockersAdded = append(ch.blockersAdded, b.Text)
			}
		}
		if !since.IsZero() {
			if s.Ckpt.BlockersSince == nil {
				s.Ckpt.BlockersSince = map[string]time.Time{}
			}
			s.Ckpt.BlockersSince[b.Text] = since
		}
	}
	if prev != nil && !in.now.IsZero() {
		for _, b := range prev.Blockers {
			if !slices.Contains(s.Blockers, b) {
				ch.blockersCleared = append(ch.blockersCleared, b)
			}
		}
	}
}

// deriveAgents credits newly completed tasks to the agent that completed
// them, and takes reopened tasks back.
func deriveAgents(s *State, in deriveInput, ch changes) {
	credit := func(by, id string, at time.Time) {
		a := s.Agents[by]
		if a == nil {
			a = &AgentState{Type: agentType(by), AssignedTasks: []string{}, CompletedTasks: []string{}}
			s.Agents[by] = a
		}
		if !slices.Contains(a.CompletedTasks, id) {
			a.CompletedTasks = append(a.CompletedTasks, id)
		}
		if at.After(a.LastActive) {
			a.LastActive = at
		}
	}
	for _, id := range ch.completed {
		if by := byFor(in.known, id, in.by); by != "" {
			credit(by, id, in.now)
		}
	}
	// A state rebuilt from plan.md alone (both state.json and recovery.json
	// lost) has no agents: credit each done task to whoever history.jsonl
	// says completed it, at that time.
	for _, ph := range sortedPhases(s) {
		for _, id := range sortedTasks(ph) {
			t := ph.Tasks[id]
			k, ok := in.known.tasks[id]
			if t == nil || !t.Done || !ok || k.CompletedBy == "" || k.CompletedAt == nil {
				continue
			}
			if !slices.ContainsFunc(agentsOf(s), func(a *AgentState) bool { return slices.Contains(a.CompletedTasks, id) }) {
				credit(k.CompletedBy, id, *k.CompletedAt)
			}
		}
	}
	for _, a := range s.Agents {
		a.CompletedTasks = slices.DeleteFunc(a.CompletedTasks, func(id string) bool { return slices.Contains(ch.reopened, id) })
	}
	if in.assign.agent != "" && len(in.assign.tasks) > 0 {
		a := s.Agents[in.assign.agent]
		if a == nil {
			a = &AgentState{Type: agentType(in.assign.agent), AssignedTasks: []string{}, CompletedTasks: []string{}}
			s.Agents[in.assign.agent] = a
		}
		for _, id := range in.assign.tasks {
			if !slices.Contains(a.AssignedTasks, id) {
				a.AssignedTasks = append(a.AssignedTasks, id)
			}
		}
		if in.now.After(a.LastActive) {
			a.LastActive = in.now
		}
	}
}

// agentType is the type part of a completedBy value: "subagent:fullstack"
// is a "fullstack", "team:a1" a "team", "main" a "main".
func agentType(by string) string {
	kind, rest, ok := strings.Cut(by, ":")
	switch {
	case !ok:
		return by
	case kind == "subagent" && rest != "":
		return rest
	default:
		return kind
	}
}

func sortedPhases(s *State) []*PhaseState {
	ids := make([]string, 0, len(s.Phases))
	for id := range s.Phases {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]*PhaseState, 0, len(ids))
	for _, id := range ids {
		if s.Phases[id] != nil {
			out = append(out, s.Phases[id])
		}
	}
	return out
}

func sortedTasks(ph *PhaseState) []string {
	ids := make([]string, 0, len(ph.Tasks))
	for id := range ph.Tasks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func agentsOf(s *State) []*AgentState {
	out := make([]*AgentState, 0, len(s.Agents))
	for _, a := range s.Agents {
		out = append(out, a)
	}
	return out
}
