package ckpt

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fold replays a whole history into the state it describes. It is a pure
// function: the same events always give the same state. Seqs must run 1, 2, 3…
func Fold(id string, events []Event) (*Checkpoint, error) {
	var c *Checkpoint
	for _, e := range events {
		var err error
		if c, err = Apply(id, c, e); err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", e.Seq, e.Type, err)
		}
	}
	if c == nil {
		return nil, fmt.Errorf("%w: %s has no history", ErrNotFound, id)
	}
	return c, nil
}

// Apply returns the state after applying e to c, the state of checkpoint id
// before it (nil if the checkpoint does not exist yet). e.Seq must be c.Rev+1.
//
// Apply validates the event against the state and refuses it with an error
// wrapping ErrInvalid, ErrExists, ErrNotFound, ErrCycleLimit, ErrCorrupt
// (a Seq out of order) or ErrConflict (a message delivered twice). It changes c in place: after an error the caller
// must discard c.
func Apply(id string, c *Checkpoint, e Event) (*Checkpoint, error) {
	if e.Type == EventCreated || c == nil && e.Type == EventImported {
		if c != nil {
			return nil, fmt.Errorf("%w: %s (revision %d)", ErrExists, id, c.Rev)
		}
		if e.Seq != 1 {
			return nil, fmt.Errorf("%w: %s event has seq %d, want 1", ErrCorrupt, e.Type, e.Seq)
		}
		if e.Type == EventImported {
			return applySnapshot(id, &Checkpoint{Rev: 0, StartedAt: e.At.UTC()}, e)
		}
		return applyCreated(id, e)
	}
	if c == nil {
		return nil, fmt.Errorf("%w: %s: it was never created", ErrNotFound, id)
	}
	if e.Seq != c.Rev+1 {
		return nil, fmt.Errorf("%w: %s event has seq %d after revision %d", ErrCorrupt, e.Type, e.Seq, c.Rev)
	}
	if e.Type == EventRestored || e.Type == EventImported || e.Type == EventSynced {
		return applySnapshot(id, c, e)
	}
	at := e.At.UTC()
	doneBefore := c.Progress.Done
	if err := applyChange(id, c, e, at); err != nil {
		return nil, err
	}
	c.Rev = e.Seq
	if !quietEvent(e.Type) {
		c.UpdatedAt = at
	}
	Derive(c)
	if c.Progress.Done > doneBefore {
		c.ResumesWithoutProgress = 0
	}
	return c, nil
}

// applyChange applies the payload of e, an event that changes an existing
// checkpoint (not a snapshot), to c.
func applyChange(id string, c *Checkpoint, e Event, at time.Time) error {
	switch e.Type {
	case EventUpdate:
		var p Patch
		return decodeThen(e, &p, func() error { return applyPatch(c, p, at) })
	case EventStatus:
		var s StatusChange
		return decodeThen(e, &s, func() error { return applyStatus(c, s.Status, s.Reason, at) })
	case EventStep:
		var s StepChange
		return decodeThen(e, &s, func() error { return applyStep(c, s, at) })
	case EventDecision:
		var d DecisionData
		return decodeThen(e, &d, func() error { return applyDecision(c, d, at) })
	case EventBlocker:
		var b BlockerChange
		return decodeThen(e, &b, func() error { return applyBlocker(c, b, at) })
	case EventError:
		var x ErrorChange
		return decodeThen(e, &x, func() error { return applyError(c, x, at) })
	case EventAccept:
		var a AcceptChange
		return decodeThen(e, &a, func() error { return applyAccept(c, a, at) })
	case EventCycle:
		return applyCycle(id, c)
	case EventResumed:
		var s SessionChange
		return decodeThen(e, &s, func() error { return applyResumed(c, s, at) })
	case EventTakenOver:
		var t Takeover
		return decodeThen(e, &t, func() error { return applyTakenOver(c, t, at) })
	case EventRestarted:
		var r Restart
		return decodeThen(e, &r, func() error { restart(c, r, at); return nil })
	case EventArchived:
		var a Archive
		return decodeThen(e, &a, func() error { return applyArchived(c, a, at) })
	case EventNote:
		var n Note
		return decodeThen(e, &n, func() error { return applyNote(c, n) })
	case EventCode:
		return applyCode(c, e)
	case EventTold:
		var t Tell
		return decodeThen(e, &t, func() error { return applyTold(c, e, t, at) })
	case EventDelivered:
		var d Delivery
		return decodeThen(e, &d, func() error { return applyDelivered(c, d) })
	}
	return fmt.Errorf("%w: unknown event type %q", ErrInvalid, e.Type)
}

// decodeThen decodes e's payload into v, then runs apply.
func decodeThen(e Event, v any, apply func() error) error {
	if err := decode(e, v); err != nil {
		return err
	}
	return apply()
}

func applyDecision(c *Checkpoint, d DecisionData, at time.Time) error {
	if d.Text == "" {
		return fmt.Errorf("%w: a decision needs its text", ErrInvalid)
	}
	c.Decisions = append(c.Decisions, Decision{At: at, Text: d.Text, Reason: d.Reason})
	return nil
}

func applyCycle(id string, c *Checkpoint) error {
	if c.Cycles.Max > 0 && c.Cycles.Count >= c.Cycles.Max {
		return fmt.Errorf("%w: %s has used %d of %d cycles",
			ErrCycleLimit, id, c.Cycles.Count, c.Cycles.Max)
	}
	c.Cycles.Count++
	return nil
}

func applyResumed(c *Checkpoint, s SessionChange, at time.Time) error {
	c.Session = nextSession(c.Session, s.Session, at)
	if s.Agent != nil {
		c.Agent = *s.Agent
	}
	c.ResumesWithoutProgress++
	reopen(c)
	return nil
}

func applyTakenOver(c *Checkpoint, t Takeover, at time.Time) error {
	if t.To.ID == "" && t.To.Name == "" {
		return fmt.Errorf("%w: a takeover needs the new agent", ErrInvalid)
	}
	c.Agent = t.To
	c.Session = nextSession(c.Session, t.Session, at)
	c.ResumesWithoutProgress++
	reopen(c)
	return nil
}

func applyArchived(c *Checkpoint, a Archive, at time.Time) error {
	if a.Reason == "" {
		return fmt.Errorf("%w: an archive needs a reason", ErrInvalid)
	}
	if a.At.IsZero() {
		a.At = at
	}
	c.Archived = &a
	return nil
}

func applyNote(c *Checkpoint, n Note) error {
	switch {
	case n.Text == "":
		return fmt.Errorf("%w: a note needs its text", ErrInvalid)
	case c.Context.Notes == "":
		c.Context.Notes = n.Text
	default:
		c.Context.Notes += "\n" + n.Text
	}
	return nil
}

// applySnapshot replaces c's state with the snapshot in e, keeping the
// checkpoint's ID and revision count.
func applySnapshot(id string, c *Checkpoint, e Event) (*Checkpoint, error) {
	var s Snapshot
	if err := decode(e, &s); err != nil {
		return nil, err
	}
	if s.New && c.Rev > 0 {
		return nil, fmt.Errorf("%w: %s (revision %d) cannot be created again from a snapshot", ErrExists, id, c.Rev)
	}
	started, pending := c.StartedAt, c.Messages
	*c = s.State
	// Messages are a mailbox, not the work's state: a snapshot neither
	// brings back delivered ones nor drops pending ones.
	c.Messages = pending
	c.ID, c.Rev = id, e.Seq
	// An imported or synced file keeps its own time of last change, so an
	// agent that went quiet before the import still looks quiet; a restore
	// is a change made now.
	if e.Type == EventRestored || c.UpdatedAt.IsZero() || c.UpdatedAt.After(e.At) {
		c.UpdatedAt = e.At.UTC()
	}
	if c.StartedAt.IsZero() {
		c.StartedAt = started
	}
	c.Heartbeat.LastBeat = time.Time{}
	if c.Heartbeat.Interval <= 0 {
		c.Heartbeat.Interval = Duration(DefaultInterval)
	}
	if err := validateState(c); err != nil {
		return nil, err
	}
	Derive(c)
	return c, nil
}

func decode(e Event, v any) error {
	if len(e.Data) == 0 {
		return nil
	}
	if err := unmarshalJSON(e.Data, v); err != nil {
		return fmt.Errorf("%w: %s event data: %v", ErrInvalid, e.Type, err)
	}
	return nil
}

func applyCreated(id string, e Event) (*Checkpoint, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	var cr Created
	if err := decode(e, &cr); err != nil {
		return nil, err
	}
	at := e.At.UTC()
	c := &Checkpoint{
		ID:        id,
		Status:    StatusInProgress,
		Resume:    Resume{Resumable: true},
		Heartbeat: Heartbeat{Interval: Duration(DefaultInterval)},
		StartedAt: at,
	}
	c.Session = nextSession(Session{}, cr.Session, at)
	if err := applyPatch(c, cr.Patch, at); err != nil {
		return nil, err
	}
	for _, s := range cr.Steps {
		if s.Status == "" {
			s.Status = StepPending
		}
		if err := applyStep(c, StepChange{ID: s.ID, Title: s.Title, Status: s.Status, Phase: s.Phase, By: s.By, Output: s.Output, Notes: s.Notes}, at); err != nil {
			return nil, err
		}
	}
	for _, a := range cr.Acceptance {
		if err := applyAccept(c, AcceptChange{ID: a.ID, Title: a.Title, Met: a.Met}, at); err != nil {
			return nil, err
		}
	}
	c.Rev = 1
	c.UpdatedAt = at
	Derive(c)
	return c, nil
}

func nextSession(prev, given Session, at time.Time) Session {
	s := given
	if s.Number == 0 {
		s.Number = prev.Number + 1
	}
	if s.StartedAt.IsZero() {
		s.StartedAt = at
	}
	return s
}

// reopen puts a resumed or taken-over checkpoint back to work, unless it is
// still blocked.
func reopen(c *Checkpoint) {
	if c.Status != StatusBlocked {
		c.Status = StatusInProgress
		c.StatusReason = ""
		c.CompletedAt = nil
	}
}

func applyStatus(c *Checkpoint, s Status, reason string, at time.Time) error {
	if !s.Valid() {
		_, err := ParseStatus(string(s))
		return err
	}
	c.Status, c.StatusReason = s, reason
	if s == StatusDone || s == StatusFailed || s == StatusAbandoned {
		t := at
		c.CompletedAt = &t
	} else {
		c.CompletedAt = nil
	}
	return nil
}

// applyPatch applies p to c. It validates p first: an invalid patch
// returns validatePatch's error and leaves c unchanged. Fields p leaves nil are kept; labels and files are added
// without duplicates.
func applyPatch(c *Checkpoint, p Patch, at time.Time) error {
	if err := validatePatch(p); err != nil {
		return err
	}
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&c.Title, p.Title)
	set(&c.TaskID, p.TaskID)
	set(&c.Parent, p.Parent)
	set(&c.Stage, p.Stage)
	set(&c.Phase, p.Phase)
	set(&c.CurrentStep, p.CurrentStep)
	set(&c.Context.LastProcessed, p.LastProcessed)
	set(&c.Context.NextToProcess, p.NextToProcess)
	set(&c.Context.LastMessage, p.LastMessage)
	set(&c.Context.Notes, p.Notes)
	set(&c.Resume.Instructions, p.Instructions)
	if p.Status != nil {
		reason := c.StatusReason
		if p.StatusReason != nil {
			reason = *p.StatusReason
		}
		if err := applyStatus(c, *p.Status, reason, at); err != nil {
			return err
		}
	} else {
		set(&c.StatusReason, p.StatusReason)
	}
	if p.Agent != nil {
		c.Agent = *p.Agent
	}
	if p.Progress != nil {
		c.Progress.Done, c.Progress.Total = p.Progress.Done, p.Progress.Total
	}
	c.Labels = addUnique(c.Labels, p.AddLabels)
	if len(p.RemoveLabels) > 0 {
		c.Labels = slices.DeleteFunc(c.Labels, func(l string) bool { return slices.Contains(p.RemoveLabels, l) })
	}
	c.Files.Created = addUnique(c.Files.Created, p.FilesCreated)
	c.Files.Modified = addUnique(c.Files.Modified, p.FilesModified)
	if p.Resumable != nil {
		c.Resume.Resumable = *p.Resumable
	}
	if p.NextSteps != nil {
		c.Resume.NextSteps = slices.Clone(*p.NextSteps)
	}
	if p.MaxCycles != nil {
		c.Cycles.Max = *p.MaxCycles
	}
	mergePatchMaps(c, p)
	if p.Interval != nil {
		c.Heartbeat.Interval = *p.Interval
	}
	return nil
}

// validatePatch returns the error applyPatch gives for p, or nil when every
// field p sets is valid. It changes nothing.
func validatePatch(p Patch) error {
	if p.Status != nil && !p.Status.Valid() {
		_, err := ParseStatus(string(*p.Status))
		return err
	}
	if p.Parent != nil && *p.Parent != "" {
		if err := ValidateID(*p.Parent); err != nil {
			return fmt.Errorf("parent: %w", err)
		}
	}
	if p.Progress != nil && (p.Progress.Done < 0 || p.Progress.Total < 0 || p.Progress.Done > p.Progress.Total) {
		return fmt.Errorf("%w: progress %d/%d: give done/total with 0 <= done <= total", ErrInvalid, p.Progress.Done, p.Progress.Total)
	}
	if p.MaxCycles != nil && *p.MaxCycles < 0 {
		return fmt.Errorf("%w: max cycles %d is negative", ErrInvalid, *p.MaxCycles)
	}
	if p.Interval != nil && *p.Interval <= 0 {
		return fmt.Errorf("%w: heartbeat interval %s must be positive", ErrInvalid, p.Interval.D())
	}
	for k := range p.Meta {
		if k == "" {
			return fmt.Errorf("%w: a meta entry has an empty key (each is key=value)", ErrInvalid)
		}
	}
	return nil
}

// mergePatchMaps sets each review score p names and each meta key (a JSON
// null deletes the key) in c, making the maps when needed.
func mergePatchMaps(c *Checkpoint, p Patch) {
	for k, v := range p.ReviewScores {
		if c.ReviewScores == nil {
			c.ReviewScores = map[string]*float64{}
		}
		c.ReviewScores[k] = v
	}
	for k, v := range p.Meta {
		if string(v) == "null" {
			delete(c.Meta, k)
			continue
		}
		if c.Meta == nil {
			c.Meta = map[string]json.RawMessage{}
		}
		c.Meta[k] = v
	}
}

func addUnique(list, add []string) []string {
	for _, s := range add {
		if s != "" && !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

func applyStep(c *Checkpoint, s StepChange, at time.Time) error {
	if s.ID == "" {
		return fmt.Errorf("%w: a step needs an ID", ErrInvalid)
	}
	if s.Status != "" && !s.Status.Valid() {
		return fmt.Errorf("%w: step status %q: use pending, in_progress, done, failed or skipped", ErrInvalid, s.Status)
	}
	i := c.StepIndex(s.ID)
	if i < 0 && s.MustExist {
		return stepNotFound(c, s.ID)
	}
	if i < 0 {
		c.Steps = append(c.Steps, Step{ID: s.ID, Status: StepPending})
		i = len(c.Steps) - 1
	}
	st := &c.Steps[i]
	for _, f := range []struct{ dst, v *string }{{&st.Title, &s.Title}, {&st.Phase, &s.Phase}, {&st.By, &s.By}, {&st.Output, &s.Output}, {&st.Notes, &s.Notes}} {
		if *f.v != "" {
			*f.dst = *f.v
		}
	}
	for _, d := range s.DependsOn {
		if d != "" && d != st.ID && !slices.Contains(st.DependsOn, d) {
			st.DependsOn = append(st.DependsOn, d)
		}
	}
	if s.Status == "" || s.Status == st.Status {
		return nil
	}
	rerun := st.Status == StepFailed
	st.Status = s.Status
	t := at
	switch s.Status {
	case StepInProgress:
		st.StartedAt, st.CompletedAt = &t, nil
		if rerun && s.Notes == "" {
			st.Notes = "" // the failed run's notes are not this run's
		}
		c.CurrentStep = st.Label()
		if c.Status == StatusPending {
			c.Status = StatusInProgress
		}
	case StepDone, StepSkipped:
		st.CompletedAt = &t
		advanceCurrentStep(c, i)
	case StepFailed:
		st.CompletedAt = &t
	case StepPending:
		st.StartedAt, st.CompletedAt = nil, nil
	}
	return nil
}

// advanceCurrentStep moves CurrentStep on from step i, just finished, when
// it named that step: to the step Position makes current, or to nothing
// when every step is finished. Any other text is the agent's own and stays.
func advanceCurrentStep(c *Checkpoint, i int) {
	if c.CurrentStep == "" || c.namedStep(c.CurrentStep) != i && c.CurrentStep != c.Steps[i].Label() {
		return
	}
	c.CurrentStep = ""
	if next := c.CurrentStepIndex(); next >= 0 {
		c.CurrentStep = c.Steps[next].Label()
	}
}

func applyBlocker(c *Checkpoint, b BlockerChange, at time.Time) error {
	if !b.Clear {
		if b.Text == "" {
			return fmt.Errorf("%w: a blocker needs its text", ErrInvalid)
		}
		id := b.ID
		if id == "" {
			id = "b" + strconv.Itoa(len(c.Blockers)+1)
		}
		for _, x := range c.Blockers {
			if x.ID == id && x.Active() {
				return fmt.Errorf("%w: blocker %s is already active", ErrInvalid, id)
			}
		}
		c.Blockers = append(c.Blockers, Blocker{ID: id, Text: b.Text, Since: at})
		if !c.Status.Final() {
			c.Status = StatusBlocked
		}
		return nil
	}
	cleared := 0
	for i := range c.Blockers {
		if c.Blockers[i].Active() && (b.ID == "" || c.Blockers[i].ID == b.ID) {
			t := at
			c.Blockers[i].ClearedAt = &t
			cleared++
		}
	}
	if cleared == 0 {
		if b.ID != "" {
			return fmt.Errorf("%w: %s has no active blocker %q (active: %s)", ErrInvalid, c.ID, b.ID, activeBlockerIDs(c))
		}
		return fmt.Errorf("%w: %s has no active blocker to clear", ErrInvalid, c.ID)
	}
	unblock(c)
	return nil
}

func applyError(c *Checkpoint, x ErrorChange, at time.Time) error {
	if x.Clear {
		n := 0
		for i := range c.Errors {
			if c.Errors[i].ClearedAt == nil && (x.Type == "" || c.Errors[i].Type == x.Type) {
				t := at
				c.Errors[i].ClearedAt = &t
				n++
			}
		}
		if n == 0 {
			return fmt.Errorf("%w: %s has no active error to clear", ErrInvalid, c.ID)
		}
		unblock(c)
		return nil
	}
	if x.Message == "" {
		return fmt.Errorf("%w: an error needs its message", ErrInvalid)
	}
	c.Errors = append(c.Errors, ErrorItem{At: at, Type: x.Type, Message: x.Message, Blocking: x.Blocking})
	if x.Blocking && !c.Status.Final() {
		c.Status = StatusBlocked
	}
	return nil
}

// unblock returns a blocked checkpoint to work once nothing blocks it.
func unblock(c *Checkpoint) {
	if c.Status != StatusBlocked || len(c.ActiveBlockers()) > 0 {
		return
	}
	for _, e := range c.ActiveErrors() {
		if e.Blocking {
			return
		}
	}
	c.Status = StatusInProgress
}

func applyAccept(c *Checkpoint, a AcceptChange, at time.Time) error {
	if a.ID == "" {
		return fmt.Errorf("%w: an acceptance criterion needs an ID", ErrInvalid)
	}
	i := slices.IndexFunc(c.Acceptance, func(x Criterion) bool { return x.ID == a.ID })
	if i < 0 {
		c.Acceptance = append(c.Acceptance, Criterion{ID: a.ID})
		i = len(c.Acceptance) - 1
	}
	cr := &c.Acceptance[i]
	if a.Title != "" {
		cr.Title = a.Title
	}
	cr.Met = a.Met
	if a.Met {
		t := at
		cr.VerifiedAt = &t
	} else {
		cr.VerifiedAt = nil
	}
	return nil
}

func restart(c *Checkpoint, r Restart, at time.Time) {
	for i := range c.Steps {
		s := &c.Steps[i]
		s.Status, s.StartedAt, s.CompletedAt, s.By, s.Output, s.Notes = StepPending, nil, nil, "", "", ""
	}
	for i := range c.Acceptance {
		c.Acceptance[i].Met, c.Acceptance[i].VerifiedAt = false, nil
	}
	c.Progress = Progress{}
	c.Decisions, c.Blockers, c.Errors = nil, nil, nil
	c.Files, c.Context = Files{}, Context{}
	c.Resume = Resume{Resumable: true}
	c.Cycles.Count = 0
	c.CurrentStep, c.StatusReason = "", ""
	c.Status, c.StartedAt, c.CompletedAt, c.Archived = StatusInProgress, at, nil, nil
	c.Session = nextSession(c.Session, r.Session, at)
	if r.Stage != "" && r.Stage != c.Stage {
		c.Stage, c.Phase = r.Stage, ""
	}
}

// validateState checks a snapshot's enumerations.
func validateState(c *Checkpoint) error {
	if !c.Status.Valid() {
		return fmt.Errorf("%w: snapshot status %q", ErrInvalid, c.Status)
	}
	for _, s := range c.Steps {
		if s.ID == "" || !s.Status.Valid() {
			return fmt.Errorf("%w: snapshot step %q has status %q", ErrInvalid, s.ID, s.Status)
		}
	}
	return nil
}

// Derive recomputes the fields of c that follow from others: progress from
// steps (done and skipped steps count as done), the percent from done/total,
// 100 for a done checkpoint without a count; and it bounds the notes
// (BoundNotes). Apply calls it after every event; adapters call it on
// states they build.
func Derive(c *Checkpoint) {
	c.Context.Notes = BoundNotes(c.Context.Notes)
	if len(c.Steps) > 0 {
		done := 0
		for _, s := range c.Steps {
			if s.Status.Finished() {
				done++
			}
		}
		c.Progress.Done, c.Progress.Total = done, len(c.Steps)
	}
	switch {
	case c.Progress.Total > 0:
		c.Progress.Percent = math.Round(float64(c.Progress.Done)/float64(c.Progress.Total)*1000) / 10
	case c.Status == StatusDone:
		c.Progress.Percent = 100
	default:
		c.Progress.Percent = 0
	}
}

// activeBlockerIDs lists c's active blockers' IDs for a message, "none"
// when there are none.
func activeBlockerIDs(c *Checkpoint) string {
	var ids []string
	for _, b := range c.ActiveBlockers() {
		if b.ID != "" {
			ids = append(ids, strconv.Quote(b.ID))
		}
	}
	if len(ids) == 0 {
		return "none with an ID"
	}
	return strings.Join(ids, ", ")
}
