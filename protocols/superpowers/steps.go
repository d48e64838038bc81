package superpowers

import (
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// StepMetaPrefix starts the meta key that carries one step's own superpowers (seed 000)
// fields, those ckpt's model has no place for: "superpowers.EXECUTE" holds
// {"tasks_total": 35, "tasks_completed": 5, "last_commit": "4f2a9c1"},
// "superpowers.FIX" {"issues_total": 2, "issues_fixed": 1, "current_issue":
// "…"}. Its members are written into the step's entry, a "progress" member
// into the entry's progress, so an agent records them with
//
//	ckpt update ID --meta-json 'superpowers.EXECUTE={"progress":{"tasks_total":35}}'
const StepMetaPrefix = Name + "."

// stepExtras returns the members meta key StepMetaPrefix+step holds, or nil.
func stepExtras(c *ckpt.Checkpoint, step string) *jsondoc.Object {
	raw, ok := c.Meta[StepMetaPrefix+step]
	if !ok {
		return nil
	}
	o, ok := jsondoc.AsObject(raw)
	if !ok {
		return nil
	}
	return o
}

// putExtras writes the step's meta members into its entry e and its
// progress; ckpt's own fields (status, times, agent, the resume point) win.
func putExtras(c *ckpt.Checkpoint, step string, e, progress *jsondoc.Object) {
	x := stepExtras(c, step)
	if x == nil {
		return
	}
	for _, k := range x.Keys() {
		if k == "progress" {
			if p, ok := jsondoc.AsObject(x.Get(k)); ok {
				for _, pk := range p.Keys() {
					if !progress.Has(pk) {
						progress.Set(pk, p.Get(pk))
					}
				}
			}
			continue
		}
		if !stepKnown(k) && !e.Has(k) {
			e.Set(k, x.Get(k))
		}
	}
}

// stepStarted is when step s started: its own start, else its completion
// (a step finished without being started, as ckpt step --done allows,
// started and ended in the same instant as far as the record knows; seed
// 000 requires started_at on every step that ran).
func stepStarted(s ckpt.Step) *time.Time {
	if s.StartedAt != nil {
		return s.StartedAt
	}
	if s.Status != ckpt.StepPending && s.CompletedAt != nil {
		return s.CompletedAt
	}
	return nil
}

// stepUpdated is a step's last_updated: the latest of its own times, and
// for the step under way the checkpoint's last change, unless that change
// was another step's start or end (finishing FIX does not touch
// EXECUTE's entry); then the time the file already had (prev) stands. A
// step that never ran has none.
func stepUpdated(c *ckpt.Checkpoint, i int, current bool, prev time.Time) *time.Time {
	s := c.Steps[i]
	var t time.Time
	for _, p := range []*time.Time{s.StartedAt, s.CompletedAt} {
		if p != nil && p.After(t) {
			t = *p
		}
	}
	if current && s.Status == ckpt.StepInProgress {
		if !otherStepChangedAt(c, i, c.UpdatedAt) && c.UpdatedAt.After(t) {
			t = c.UpdatedAt
		} else if prev.After(t) && !prev.After(c.UpdatedAt) {
			t = prev
		}
	}
	if t.IsZero() {
		return nil
	}
	return &t
}

// otherStepChangedAt reports whether a step other than i started or ended
// at t.
func otherStepChangedAt(c *ckpt.Checkpoint, i int, t time.Time) bool {
	for j, s := range c.Steps {
		if j == i {
			continue
		}
		if (s.StartedAt != nil && s.StartedAt.Equal(t)) || (s.CompletedAt != nil && s.CompletedAt.Equal(t)) {
			return true
		}
	}
	return false
}

// entryOf returns step key's entry in doc's loop_state.checkpoints, or nil.
func entryOf(doc *jsondoc.Object, key string) *jsondoc.Object {
	if doc == nil {
		return nil
	}
	ls, ok := jsondoc.AsObject(doc.Get("loop_state"))
	if !ok {
		return nil
	}
	cps, ok := jsondoc.AsObject(ls.Get("checkpoints"))
	if !ok {
		return nil
	}
	e, _ := jsondoc.AsObject(cps.Get(key))
	return e
}

// entryTime reads a time field of step key's entry in doc.
func entryTime(doc *jsondoc.Object, key, field string) time.Time {
	e := entryOf(doc, key)
	if e == nil {
		return time.Time{}
	}
	var discard jsondoc.Notes
	t, _ := (jsondoc.Fields{Obj: e, Notes: &discard}).Time(field)
	return t
}

// currentTaskStep says which step's progress.current_task holds the task
// under way: the step where the file on disk already holds it, unchanged
// (the task PLAN was on stays PLAN's when PLAN ends and EXECUTE starts),
// else the current step while it is under way; "" writes it nowhere.
func currentTaskStep(c *ckpt.Checkpoint, onDisk, src *jsondoc.Object) string {
	task := c.Context.NextToProcess
	if task == "" {
		return ""
	}
	var discard jsondoc.Notes
	for _, doc := range []*jsondoc.Object{onDisk, src} {
		if doc == nil {
			continue
		}
		ls, ok := jsondoc.AsObject(doc.Get("loop_state"))
		if !ok {
			continue
		}
		cps, ok := jsondoc.AsObject(ls.Get("checkpoints"))
		if !ok {
			continue
		}
		for _, key := range cps.Keys() {
			if t, ok := taskAt(cps, key, "current_task", &discard); ok && t == task && c.StepIndex(key) >= 0 {
				return key
			}
		}
	}
	if i := c.StepIndex(c.CurrentStep); i >= 0 && c.Steps[i].Status == ckpt.StepInProgress {
		return c.Steps[i].ID
	}
	return ""
}

// shownStep is the step current_step names: the current step, else (a
// checkpoint whose steps have not begun, or all ended) the first step not
// finished, else the last step; -1 when there are no steps.
func shownStep(c *ckpt.Checkpoint) int {
	if i := c.StepIndex(c.CurrentStep); i >= 0 {
		return i
	}
	if c.CurrentStep != "" || c.Status == ckpt.StatusDone || len(c.Steps) == 0 {
		return -1
	}
	for i, s := range c.Steps {
		if s.Status == ckpt.StepPending {
			return i
		}
	}
	return -1
}

// missingRequired names the fields superpowers (seed 000) requires of a step entry
// (status, started_at, agent, last_updated) that e lacks; a step that has
// not started needs only its status.
func missingRequired(e *jsondoc.Object, status string) []string {
	var out []string
	need := []string{"status"}
	if w := strings.ToUpper(strings.TrimSpace(status)); w != "" && w != "NOT_STARTED" {
		need = append(need, "started_at", "agent", "last_updated")
	}
	for _, k := range need {
		if v := e.Get(k); v == nil || string(v) == "null" {
			out = append(out, k)
		}
	}
	return out
}
