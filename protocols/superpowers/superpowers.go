// Package superpowers reads and writes superpowers' (seed 000) loop checkpoints: the
// Conductor track file conductor/tracks/<track-id>/metadata.json whose
// loop_state records the current step, its status, the fix cycles and one
// checkpoint per step (PLAN, EVALUATE_PLAN, EXECUTE, FIX, BRAINSTORM, …).
//
// Steps of the loop become ckpt steps, fix cycles become ckpt cycles, and the
// last task an executing step finished (superpowers' (seed 000) last_task, the value of
// the orchestrator's --resume-from) is the checkpoint's
// context.last_processed. Everything the model has no place for is kept with the whole
// file in the checkpoint's meta, so Export writes back every field. Mirror
// takes the document's .metadata.lock directory lock, as the tools that still
// write metadata.json by hand do, and merges with what they wrote.
package superpowers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/protocols"
)

// Name is the format's name on the command line and its key in
// Checkpoint.Meta, where the file as read is kept.
const Name = "superpowers"

// Format is superpowers' (seed 000) metadata.json. Use New for the document's settings.
// A Format is safe for concurrent use as long as its fields are not changed.
type Format struct {
	// LockTimeout bounds how long Mirror waits for .metadata.lock.
	LockTimeout time.Duration
	// LockPoll is how often Mirror tries the lock again (superpowers (seed 000): 0.1 s).
	LockPoll time.Duration
}

var _ protocols.Format = (*Format)(nil)

// New returns the format with a 10-second lock timeout, polled every 100 ms
// as the document's shell loop does.
func New() *Format { return &Format{LockTimeout: 10 * time.Second, LockPoll: 100 * time.Millisecond} }

// Name returns "superpowers".
func (*Format) Name() string { return Name }

// Import reads a track's metadata.json (with or without loop_state, snake or
// camel case), or a track's plan.md (tasks with **Status:** [x] become
// steps). A conductor/tracks.md registry lists many tracks and is refused
// with the list, so each can be imported from its own metadata.json.
func (*Format) Import(path string, data []byte) (protocols.Imported, error) {
	var n jsondoc.Notes
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return protocols.Imported{}, fmt.Errorf("%s is empty: a track's metadata.json is a JSON object with track_id and loop_state", path)
	}
	if trimmed[0] != '{' {
		return importMarkdown(path, trimmed)
	}
	doc, err := jsondoc.ParseObject(trimmed)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %v: a track's metadata.json is one JSON object", path, err)
	}
	c, err := docToState(doc, &n)
	if err != nil {
		return protocols.Imported{}, fmt.Errorf("%s: %w", path, err)
	}
	jsondoc.WriteMeta(c, Name, jsondoc.MetaSource{Source: doc.Raw()})
	id := suggestID(c.TaskID, path, &n)
	c.ID = id
	return protocols.Imported{ID: id, State: c, Warnings: n}, nil
}

// suggestID gives the checkpoint ID: the track ID, else the track directory
// of a conductor/tracks/<id>/… path, else the file name.
func suggestID(track, path string, n *jsondoc.Notes) string {
	if track != "" && ckpt.ValidateID(track) == nil && !strings.Contains(track, "/") {
		return track
	}
	cands := []string{strings.SplitN(filepath.Base(path), ".", 2)[0]}
	if filepath.Base(path) == "metadata.json" {
		cands = []string{filepath.Base(filepath.Dir(path))}
	}
	for _, cand := range cands {
		if cand != "" && cand != "." && cand != "/" && ckpt.ValidateID(cand) == nil && cand != "tracks" {
			if track != "" {
				n.Add("track ID %q is not a valid checkpoint ID: suggested ID %q", track, cand)
			} else {
				n.Add("no track_id: suggested ID %q from the path", cand)
			}
			return cand
		}
	}
	n.Add("no usable track ID: suggested ID %q", "track")
	return "track"
}

// topKnown reports whether k is a track field the model holds; loop_state
// is read apart. (Switches, not map literals, here and below: Go builds a
// map literal at initialisation, in every ckpt process.)
func topKnown(k string) bool {
	switch k {
	case "track_id", "trackId", "name", "description", "status", "created_at", "createdAt",
		"completed_at", "completedAt", "updated_at", "updatedAt", "loop_state":
		return true
	}
	return false
}

// loopKnown reports whether k is a loop_state field the model holds.
func loopKnown(k string) bool {
	switch k {
	case "current_step", "step_status", "step_started_at", "fix_cycle_count",
		"max_fix_cycles", "checkpoints":
		return true
	}
	return false
}

// stepKnown reports whether k is a step field the model holds.
func stepKnown(k string) bool {
	switch k {
	case "status", "started_at", "completed_at", "agent", "output_files", "notes",
		"last_updated", "last_task", "progress":
		return true
	}
	return false
}

// loopEnd is the current_step a finished loop shows; it is not a step.
const loopEnd = "COMPLETE"

// keyFor returns the name the document uses for a field: snake case, or the
// camel case of plain Conductor metadata when the file uses that.
func keyFor(src *jsondoc.Object, snake, camel string) string {
	if src != nil && !src.Has(snake) && src.Has(camel) {
		return camel
	}
	return snake
}

// docToState maps the document onto a checkpoint. It is deterministic: the
// same document always gives the same state (Export relies on that).
func docToState(doc *jsondoc.Object, n *jsondoc.Notes) (*ckpt.Checkpoint, error) {
	if !slices.ContainsFunc(doc.Keys(), func(k string) bool { return topKnown(k) }) {
		return nil, fmt.Errorf("none of a track's fields (track_id, status, loop_state, …) found: is this a conductor/tracks/<track-id>/metadata.json file?")
	}
	var kept []string
	for _, k := range doc.Keys() {
		if !topKnown(k) {
			kept = append(kept, k)
		}
	}
	f := jsondoc.Fields{Obj: doc, Notes: n}
	c := &ckpt.Checkpoint{Resume: ckpt.Resume{Resumable: true}}
	c.TaskID, _ = f.Text(keyFor(doc, "track_id", "trackId"))
	if t, ok := f.Text("name"); ok {
		c.Title = t
	} else if t, ok := f.Text("description"); ok {
		c.Title = t
		n.Add("no name: description read as the title")
	}
	if t, ok := f.Time(keyFor(doc, "created_at", "createdAt")); ok {
		c.StartedAt = t
	}
	if t, ok := f.Time(keyFor(doc, "completed_at", "completedAt")); ok {
		c.CompletedAt = &t
	}
	if t, ok := f.Time(keyFor(doc, "updated_at", "updatedAt")); ok {
		c.UpdatedAt = t
	}
	loopStatus, hasLoop := readLoop(c, doc, n, &kept)
	if w, ok := f.Text("status"); ok {
		s, guessed := jsondoc.StatusFromWord(w)
		if guessed {
			n.Add("track status %q is not a known status: read as %s", w, s)
		}
		c.Status = s
	} else if hasLoop {
		c.Status = loopStatus
		n.Add("no track status: %s taken from loop_state", loopStatus)
	} else {
		c.Status = ckpt.StatusPending
		n.Add("no track status and no loop_state: pending assumed")
	}
	if !hasLoop && doc.Has("trackId") {
		n.Add("plain Conductor metadata without loop_state: no steps, cycles or resume point to read")
	}
	if len(kept) > 0 {
		n.Add("kept as is, with no place in ckpt's model: %s", strings.Join(kept, ", "))
	}
	ckpt.Derive(c)
	return c, nil
}

// readLoop reads loop_state into c and returns the overall status it implies.
func readLoop(c *ckpt.Checkpoint, doc *jsondoc.Object, n *jsondoc.Notes, kept *[]string) (ckpt.Status, bool) {
	ls, ok := jsondoc.AsObject(doc.Get("loop_state"))
	if !ok {
		if doc.Has("loop_state") {
			n.Add("loop_state is not an object: kept as is, not read")
		}
		return "", false
	}
	for _, k := range ls.Keys() {
		if !loopKnown(k) {
			*kept = append(*kept, "loop_state."+k)
		}
	}
	f := jsondoc.Fields{Obj: ls, Notes: n, Path: "loop_state."}
	c.CurrentStep, _ = f.Text("current_step")
	stepWord, hasStepWord := f.Text("step_status")
	if v, ok := f.Count("fix_cycle_count"); ok {
		c.Cycles.Count = v
	}
	if v, ok := f.Count("max_fix_cycles"); ok {
		c.Cycles.Max = v
	}
	if c.Cycles.Max > 0 && c.Cycles.Count > c.Cycles.Max {
		n.Add("fix_cycle_count %d is past max_fix_cycles %d: ckpt will refuse another cycle until the limit is raised", c.Cycles.Count, c.Cycles.Max)
	}
	var latest time.Time
	if cps, ok := jsondoc.AsObject(ls.Get("checkpoints")); ok {
		for _, key := range cps.Keys() {
			if key == "" {
				n.Add("loop_state.checkpoints has an entry with an empty name: kept as is, not read")
				continue
			}
			if t := readStep(c, key, cps.Get(key), n, kept); t.After(latest) {
				latest = t
			}
		}
	} else if ls.Has("checkpoints") {
		n.Add("loop_state.checkpoints is not an object: kept as is, not read")
	}
	if latest.After(c.UpdatedAt) {
		c.UpdatedAt = latest
	}
	cur := c.CurrentStep
	if cur != "" && cur != loopEnd && c.StepIndex(cur) < 0 {
		st := ckpt.StepPending
		if hasStepWord {
			st = stepStatus(c, cur, stepWord, "loop_state.step_status", n)
		}
		c.Steps = append(c.Steps, ckpt.Step{ID: cur, Status: st})
	}
	if i := c.StepIndex(cur); i >= 0 {
		if t, ok := f.Time("step_started_at"); ok && c.Steps[i].StartedAt == nil {
			c.Steps[i].StartedAt = &t
		}
		if hasStepWord {
			if w := stepWordOf(c, c.Steps[i]); !strings.EqualFold(w, stepWord) {
				n.Add("loop_state.step_status %q disagrees with checkpoints.%s.status %q: the checkpoint entry is kept", stepWord, cur, w)
			}
		}
	}
	readResumePoint(c, ls)
	switch {
	case cur == loopEnd:
		return ckpt.StatusDone, true
	case hasStepWord:
		if s, _ := jsondoc.StatusFromWord(stepWord); s == ckpt.StatusFailed || s == ckpt.StatusBlocked {
			return s, true
		}
	}
	return ckpt.StatusInProgress, true
}

// readStep reads one per-step checkpoint and returns its last_updated time.
func readStep(c *ckpt.Checkpoint, key string, raw json.RawMessage, n *jsondoc.Notes, kept *[]string) time.Time {
	e, ok := jsondoc.AsObject(raw)
	if !ok {
		n.Add("loop_state.checkpoints.%s is not an object: kept as is, not read", key)
		return time.Time{}
	}
	path := "loop_state.checkpoints." + key + "."
	for _, k := range e.Keys() {
		if !stepKnown(k) {
			*kept = append(*kept, path+k)
		}
	}
	if p, ok := jsondoc.AsObject(e.Get("progress")); ok {
		for _, k := range p.Keys() {
			if k != "current_task" && k != "last_task" {
				*kept = append(*kept, path+"progress."+k)
			}
		}
	}
	f := jsondoc.Fields{Obj: e, Notes: n, Path: path}
	s := ckpt.Step{ID: key, Status: ckpt.StepPending}
	w, ok := f.Text("status")
	if ok {
		s.Status = stepStatus(c, key, w, path+"status", n)
	} else {
		n.Add("%sstatus missing: NOT_STARTED assumed", path)
	}
	if miss := missingRequired(e, w); ok && len(miss) > 0 {
		n.Add("%s lacks what seed 000 requires of a step that ran: %s", strings.TrimSuffix(path, "."), strings.Join(miss, ", "))
	}
	if t, ok := f.Time("started_at"); ok {
		s.StartedAt = &t
	}
	if t, ok := f.Time("completed_at"); ok {
		s.CompletedAt = &t
	}
	s.By, _ = f.Text("agent")
	if files, ok := f.Texts("output_files"); ok {
		files = jsondoc.NonEmpty(files)
		s.Output = strings.Join(files, "\n")
		c.Files.Created = addUnique(c.Files.Created, files)
	}
	s.Notes, _ = f.Text("notes")
	updated, _ := f.Time("last_updated")
	// A blocked step: its blocker carries the step's notes.
	if i := blockerIndex(c, key); i >= 0 {
		c.Blockers[i].Text = blockerText(key, s.Notes)
		switch {
		case !updated.IsZero():
			c.Blockers[i].Since = updated
		case s.StartedAt != nil:
			c.Blockers[i].Since = *s.StartedAt
		}
	}
	c.Steps = append(c.Steps, s)
	return updated
}

func blockerText(key, notes string) string {
	if notes != "" {
		return notes
	}
	return key + " is blocked"
}

func blockerIndex(c *ckpt.Checkpoint, id string) int {
	return slices.IndexFunc(c.Blockers, func(b ckpt.Blocker) bool { return b.ID == id && b.Active() })
}

// stepStatus maps a step status word (NOT_STARTED, IN_PROGRESS, PASSED,
// FAILED, BLOCKED, SKIPPED) onto a step status. A blocked step stays in
// progress and gets an active blocker with the step's name as its ID.
func stepStatus(c *ckpt.Checkpoint, key, word, field string, n *jsondoc.Notes) ckpt.StepStatus {
	if strings.EqualFold(strings.TrimSpace(word), "skipped") {
		return ckpt.StepSkipped
	}
	s := jsondoc.ReadStatus(n, field, word, "seed 000")
	switch s {
	case ckpt.StatusPending:
		return ckpt.StepPending
	case ckpt.StatusDone:
		return ckpt.StepDone
	case ckpt.StatusFailed:
		return ckpt.StepFailed
	case ckpt.StatusAbandoned:
		n.Add("%s %q: the step is read as skipped", field, word)
		return ckpt.StepSkipped
	case ckpt.StatusBlocked:
		if blockerIndex(c, key) < 0 {
			c.Blockers = append(c.Blockers, ckpt.Blocker{ID: key, Text: blockerText(key, "")})
		}
		return ckpt.StepInProgress
	case ckpt.StatusWaiting:
		n.Add("%s %q: the step is read as in progress (steps do not wait)", field, word)
	}
	return ckpt.StepInProgress
}

// readResumePoint reads the last task done and the task under way: from the
// current step first (as last_task or progress.last_task), then from the
// latest step that has one.
func readResumePoint(c *ckpt.Checkpoint, ls *jsondoc.Object) {
	cps, ok := jsondoc.AsObject(ls.Get("checkpoints"))
	if !ok {
		return
	}
	var discard jsondoc.Notes
	order := append([]string{c.CurrentStep}, reversed(cps.Keys())...)
	for _, key := range order {
		if t, ok := taskAt(cps, key, "last_task", &discard); ok {
			c.Context.LastProcessed = t
			break
		}
	}
	if t, ok := taskAt(cps, c.CurrentStep, "current_task", &discard); ok {
		c.Context.NextToProcess = t
	}
}

// taskAt reads field from step key, at the step's level or in its progress.
func taskAt(cps *jsondoc.Object, key, field string, n *jsondoc.Notes) (string, bool) {
	e, ok := jsondoc.AsObject(cps.Get(key))
	if !ok {
		return "", false
	}
	if t, ok := (jsondoc.Fields{Obj: e, Notes: n}).Text(field); ok && t != "" {
		return t, true
	}
	if p, ok := jsondoc.AsObject(e.Get("progress")); ok {
		if t, ok := (jsondoc.Fields{Obj: p, Notes: n}).Text(field); ok && t != "" {
			return t, true
		}
	}
	return "", false
}

func reversed(list []string) []string {
	out := slices.Clone(list)
	slices.Reverse(out)
	return out
}

func addUnique(list, add []string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// TrackID returns the Conductor track c stands for: its task ID, else the
// last segment of its ID.
func TrackID(c *ckpt.Checkpoint) string {
	if c.TaskID != "" {
		return c.TaskID
	}
	return c.ID[strings.LastIndexByte(c.ID, '/')+1:]
}

// Export renders c as the track's metadata.json. A checkpoint imported from
// such a file gets back every field of that file: unknown fields verbatim,
// and each known field in the file's spelling unless c changed it.
func (*Format) Export(c *ckpt.Checkpoint) ([]byte, error) {
	base, src, err := baseDocument(c)
	if err != nil {
		return nil, err
	}
	ours := render(c, src, nil)
	if src == nil {
		return ours.Indented(), nil
	}
	return jsondoc.Merge(base, ours, src).Indented(), nil
}

// baseDocument returns the rendering of the file c was imported from, and
// that file; both nil for a checkpoint that was not imported.
func baseDocument(c *ckpt.Checkpoint) (base, src *jsondoc.Object, err error) {
	src, s0, err := jsondoc.ImportedState(c, Name, docToState)
	if err != nil || src == nil {
		return nil, nil, err
	}
	return render(s0, src, nil), src, nil
}

// trackWord is the track status word written for a status.
func trackWord(k ckpt.Status) string {
	switch k {
	case ckpt.StatusPending:
		return "new"
	case ckpt.StatusInProgress:
		return "in_progress"
	case ckpt.StatusWaiting:
		return "paused"
	case ckpt.StatusBlocked:
		return "blocked"
	case ckpt.StatusDone:
		return "complete"
	case ckpt.StatusFailed:
		return "failed"
	case ckpt.StatusAbandoned:
		return "abandoned"
	}
	return ""
}

// stepWordOf returns superpowers' (seed 000) status word for step s of c.
func stepWordOf(c *ckpt.Checkpoint, s ckpt.Step) string {
	switch s.Status {
	case ckpt.StepDone:
		return "PASSED"
	case ckpt.StepFailed:
		return "FAILED"
	case ckpt.StepSkipped:
		return "SKIPPED"
	case ckpt.StepInProgress:
		if blockerIndex(c, s.ID) >= 0 || blockedHere(c, s) {
			return "BLOCKED"
		}
		return "IN_PROGRESS"
	}
	return "NOT_STARTED"
}

// blockedHere reports a blocked checkpoint whose blocker names no step:
// its current step is the one that is blocked (ckpt block ID TEXT needs no
// step name).
func blockedHere(c *ckpt.Checkpoint, s ckpt.Step) bool {
	if c.Status != ckpt.StatusBlocked || c.CurrentStepIndex() < 0 || c.Steps[c.CurrentStepIndex()].ID != s.ID {
		return false
	}
	return unattachedBlocker(c) >= 0
}

// unattachedBlocker is the index of the first active blocker that names no
// step, or -1.
func unattachedBlocker(c *ckpt.Checkpoint) int {
	return slices.IndexFunc(c.Blockers, func(b ckpt.Blocker) bool { return b.Active() && c.StepIndex(b.ID) < 0 })
}

// render writes c as the document. src, the file c was imported from (nil if
// none), decides only names and places: camel or snake case, name or
// description, where last_task lives.
//
// onDisk, the file as it is now (nil if unknown), keeps last_task under the
// step that holds it there while it is unchanged, so the resume point of
// one step does not move to the next step when that one starts.
func render(c *ckpt.Checkpoint, src, onDisk *jsondoc.Object) *jsondoc.Object {
	o := jsondoc.NewObject()
	// Fields a store fills in (an ID, a start time) are written for a file an
	// import had only when that file had them.
	if k := keyFor(src, "track_id", "trackId"); src == nil {
		o.Put(k, TrackID(c))
	} else if c.TaskID != "" || src.Has(k) {
		o.Put(k, c.TaskID)
	}
	if c.Title != "" {
		key := "name"
		if src != nil && !src.Has("name") && src.Has("description") {
			key = "description"
		}
		o.Put(key, c.Title)
	}
	o.Put("status", trackWord(c.Status))
	if k := keyFor(src, "created_at", "createdAt"); !c.StartedAt.IsZero() && (src == nil || src.Has(k)) {
		o.Put(k, jsondoc.FormatTime(c.StartedAt))
	}
	if c.CompletedAt != nil {
		o.Put(keyFor(src, "completed_at", "completedAt"), jsondoc.FormatTime(*c.CompletedAt))
	}
	if k := keyFor(src, "updated_at", "updatedAt"); src != nil && src.Has(k) && !c.UpdatedAt.IsZero() {
		o.Put(k, jsondoc.FormatTime(c.UpdatedAt))
	}
	if len(c.Steps) > 0 || c.CurrentStep != "" || c.Cycles != (ckpt.Cycles{}) || (src != nil && src.Has("loop_state")) {
		o.Set("loop_state", renderLoop(c, src, onDisk).Raw())
	}
	return o
}

func renderLoop(c *ckpt.Checkpoint, src, onDisk *jsondoc.Object) *jsondoc.Object {
	ls := jsondoc.NewObject()
	cur := shownStep(c)
	switch {
	case cur >= 0:
		ls.Put("current_step", c.Steps[cur].ID)
		ls.Put("step_status", stepWordOf(c, c.Steps[cur]))
		if t := c.Steps[cur].StartedAt; t != nil {
			ls.Put("step_started_at", jsondoc.FormatTime(*t))
		}
	case c.Status == ckpt.StatusDone:
		ls.Put("current_step", c.CurrentStep)
		ls.Put("step_status", "PASSED")
	case c.Status == ckpt.StatusFailed || c.Status == ckpt.StatusBlocked:
		ls.Put("current_step", c.CurrentStep)
		ls.Put("step_status", strings.ToUpper(string(c.Status)))
	case c.Status == ckpt.StatusPending:
		ls.Put("current_step", c.CurrentStep)
		ls.Put("step_status", "NOT_STARTED")
	default:
		ls.Put("current_step", c.CurrentStep)
		ls.Put("step_status", "IN_PROGRESS")
	}
	ls.Put("fix_cycle_count", c.Cycles.Count)
	if c.Cycles.Max > 0 {
		ls.Put("max_fix_cycles", c.Cycles.Max)
	}
	lastAt, lastInProgress := lastTaskPlace(c, src)
	if at, inProgress, ok := unchangedLastTask(c, onDisk); ok {
		lastAt, lastInProgress = at, inProgress
	}
	taskAt := currentTaskStep(c, onDisk, src)
	prevDoc := onDisk
	if prevDoc == nil {
		prevDoc = src
	}
	cps := jsondoc.NewObject()
	for i, s := range c.Steps {
		e := jsondoc.NewObject()
		e.Put("status", stepWordOf(c, s))
		if t := stepStarted(s); t != nil {
			e.Put("started_at", jsondoc.FormatTime(*t))
		}
		if s.CompletedAt != nil && (s.Status.Finished() || s.Status == ckpt.StepFailed) {
			// A step under way again has no completion time of its own.
			e.Put("completed_at", jsondoc.FormatTime(*s.CompletedAt))
		}
		if s.By != "" {
			e.Put("agent", s.By)
		}
		progress := jsondoc.NewObject()
		if s.ID == taskAt {
			progress.Put("current_task", c.Context.NextToProcess)
		}
		if s.ID == lastAt && c.Context.LastProcessed != "" {
			if lastInProgress {
				progress.Put("last_task", c.Context.LastProcessed)
			} else {
				e.Put("last_task", c.Context.LastProcessed)
			}
		}
		putExtras(c, s.ID, e, progress)
		if progress.Len() > 0 {
			e.Set("progress", progress.Raw())
		}
		if s.Output != "" {
			e.Put("output_files", jsondoc.NonEmpty(strings.Split(s.Output, "\n")))
		}
		notes := s.Notes
		if i := blockerIndex(c, s.ID); i >= 0 && notes == "" {
			notes = c.Blockers[i].Text // seed 000 writes why a step is blocked in its notes
		} else if blockedHere(c, s) && notes == "" {
			notes = c.Blockers[unattachedBlocker(c)].Text
		}
		if notes != "" {
			e.Put("notes", notes)
		}
		if t := stepUpdated(c, i, i == c.StepIndex(c.CurrentStep), entryTime(prevDoc, s.ID, "last_updated")); t != nil {
			e.Put("last_updated", jsondoc.FormatTime(*t))
		}
		cps.Set(s.ID, e.Raw())
	}
	ls.Set("checkpoints", cps.Raw())
	return ls
}

// unchangedLastTask finds the step of doc (the file as it is) whose
// last_task is c's, unchanged: where it stays.
func unchangedLastTask(c *ckpt.Checkpoint, doc *jsondoc.Object) (step string, inProgress, ok bool) {
	if doc == nil || c.Context.LastProcessed == "" {
		return "", false, false
	}
	ls, ok1 := jsondoc.AsObject(doc.Get("loop_state"))
	if !ok1 {
		return "", false, false
	}
	cps, ok1 := jsondoc.AsObject(ls.Get("checkpoints"))
	if !ok1 {
		return "", false, false
	}
	var discard jsondoc.Notes
	for _, key := range cps.Keys() {
		e, ok := jsondoc.AsObject(cps.Get(key))
		if !ok || c.StepIndex(key) < 0 {
			continue
		}
		if t, ok := (jsondoc.Fields{Obj: e, Notes: &discard}).Text("last_task"); ok && t == c.Context.LastProcessed {
			return key, false, true
		}
		if t, ok := taskAt(cps, key, "last_task", &discard); ok && t == c.Context.LastProcessed {
			return key, true, true
		}
	}
	return "", false, false
}

// lastTaskPlace says where last_task is written: where the imported file had
// it, else at the level of the current step (else the last step), beside
// last_commit as superpowers' (seed 000) executing-plans update has it.
func lastTaskPlace(c *ckpt.Checkpoint, src *jsondoc.Object) (step string, inProgress bool) {
	if src != nil {
		if ls, ok := jsondoc.AsObject(src.Get("loop_state")); ok {
			if cps, ok := jsondoc.AsObject(ls.Get("checkpoints")); ok {
				var discard jsondoc.Notes
				for _, key := range append([]string{c.CurrentStep}, reversed(cps.Keys())...) {
					e, ok := jsondoc.AsObject(cps.Get(key))
					if !ok || c.StepIndex(key) < 0 {
						continue
					}
					if t, ok := (jsondoc.Fields{Obj: e, Notes: &discard}).Text("last_task"); ok && t != "" {
						return key, false
					}
					if _, ok := taskAt(cps, key, "last_task", &discard); ok {
						return key, true
					}
				}
			}
		}
	}
	if c.StepIndex(c.CurrentStep) >= 0 {
		return c.CurrentStep, false
	}
	if len(c.Steps) > 0 {
		return c.Steps[len(c.Steps)-1].ID, false
	}
	return "", false
}
