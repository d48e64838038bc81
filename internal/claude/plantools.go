package claude

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// A client's own plan reaches the hooks as the tool calls that write it:
// Claude Code 2.1's TaskCreate and TaskUpdate (one task each), older Claude
// Code's TodoWrite, Codex's update_plan and Gemini CLI's write_todos (the
// whole list each time). planItem is one task of such a call.
type planItem struct {
	// TaskID is the client's task ID (TaskCreate, TaskUpdate); "" for a
	// list item, which is known by its text.
	TaskID    string
	Title     string
	Notes     string
	Status    ckpt.StepStatus // "" leaves the status alone
	Deleted   bool
	BlockedBy []string // client task IDs this one waits for
	Blocks    []string // client task IDs that wait for this one
}

// planToolItems reads the tasks a plan tool call wrote; ok is false when
// the tool is not a plan tool.
func planToolItems(in Input) (items []planItem, ok bool) {
	if !IsPlanTool(in.ToolName) {
		return nil, false // most tool calls: their input is not read
	}
	args, _ := objectMembers(in.ToolInput)
	switch normTool(in.ToolName) {
	case "taskcreate":
		it := planItem{Title: lenientString(args.raw("subject")), Notes: lenientString(args.raw("description"))}
		if resp, ok := objectMembers(in.ToolResponse); ok {
			if task, ok := objectMembers(resp.raw("task")); ok {
				it.TaskID = lenientString(task.raw("id"))
				if it.Title == "" {
					it.Title = lenientString(task.raw("subject"))
				}
			}
		}
		return []planItem{it}, true
	case "taskupdate":
		it := planItem{TaskID: lenientString(args.raw("taskId")), Title: lenientString(args.raw("subject")),
			Notes: lenientString(args.raw("description")), BlockedBy: idList(args.raw("addBlockedBy")), Blocks: idList(args.raw("addBlocks"))}
		if it.TaskID == "" {
			it.TaskID = lenientString(args.raw("task_id"))
		}
		it.Status, it.Deleted = planStatus(lenientString(args.raw("status")))
		if it.TaskID == "" {
			return nil, true
		}
		return []planItem{it}, true
	case "todowrite", "writetodos", "updateplan":
		return listItems(args), true
	}
	return nil, false
}

// listItems reads a whole-list plan: TodoWrite's todos [{content, status}],
// Gemini CLI's todos [{description, status}], Codex's plan [{step,
// status}].
func listItems(args members) []planItem {
	var raw []map[string]json.RawMessage
	for _, k := range []string{"todos", "plan", "items"} {
		if r := args.raw(k); len(r) > 0 && json.Unmarshal(r, &raw) == nil {
			break
		}
	}
	var out []planItem
	for _, m := range raw {
		var title string
		for _, k := range []string{"content", "description", "step", "title", "text"} {
			if title = strings.TrimSpace(lenientString(m[k])); title != "" {
				break
			}
		}
		if title == "" {
			continue
		}
		st, del := planStatus(lenientString(m["status"]))
		out = append(out, planItem{Title: title, Status: st, Deleted: del})
	}
	return out
}

// planStatus maps a client's task status to a step status: pending,
// in_progress, completed (done), deleted or cancelled (skipped).
func planStatus(s string) (ckpt.StepStatus, bool) {
	switch strings.ToLower(strings.TrimSpace(strings.ReplaceAll(s, "-", "_"))) {
	case "pending", "todo", "not_started":
		return ckpt.StepPending, false
	case "in_progress", "inprogress", "active", "started":
		return ckpt.StepInProgress, false
	case "completed", "complete", "done":
		return ckpt.StepDone, false
	case "deleted", "cancelled", "canceled", "removed":
		return ckpt.StepSkipped, true
	}
	return "", false
}

func idList(raw json.RawMessage) []string {
	var xs []json.RawMessage
	if json.Unmarshal(raw, &xs) != nil {
		if s := lenientString(raw); s != "" {
			return []string{s}
		}
		return nil
	}
	var out []string
	for _, x := range xs {
		if s := strings.TrimSpace(lenientString(x)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// normTool is a tool's name in lower case without '_' and '-'. Every
// PostToolUse asks it a few times, hence no strings.Replacer.
func normTool(name string) string {
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		if ch := name[i]; ch != '_' && ch != '-' {
			b = append(b, ch)
		}
	}
	return strings.ToLower(string(b))
}

// IsPlanTool reports whether name is a tool with which a client writes its
// plan (TaskCreate, TaskUpdate, TodoWrite, update_plan, write_todos).
func IsPlanTool(name string) bool {
	switch normTool(name) {
	case "taskcreate", "taskupdate", "todowrite", "writetodos", "updateplan":
		return true
	}
	return false
}

// statusRank orders step statuses so that the hooks only move a step
// forward: a late or repeated call never reopens a finished step or sends
// a started one back to pending (reopening is `ckpt step`'s).
func statusRank(s ckpt.StepStatus) int {
	switch s {
	case ckpt.StepPending:
		return 0
	case ckpt.StepInProgress, ckpt.StepFailed:
		return 1
	case ckpt.StepDone, ckpt.StepSkipped:
		return 2
	}
	return -1
}

// planSteps turns items into step changes against cp. Each task gets a
// stable step ID (stepFor); a task whose title an existing step not made
// from a plan tool already has (the agent's `ckpt step`, a plan.md) is
// that step, never a second one. Only changes that change something are
// returned, so a repeated call appends nothing.
func planSteps(cp *ckpt.Checkpoint, session string, items []planItem) (changes []ckpt.StepChange, aliases map[string]string) {
	aliases = map[string]string{}
	known := planTaskMap(cp)
	// mine are the steps this session's tasks already are: another task
	// of the session with the same title is another step.
	mine := map[string]bool{}
	for k, id := range known {
		if strings.HasPrefix(k, session+":") {
			mine[id] = true
		}
	}
	resolve := func(taskID, title string) string {
		if taskID != "" {
			k := session + ":" + taskID
			if id, ok := known[k]; ok {
				return id
			}
			if id, ok := aliases[k]; ok {
				return id
			}
		}
		id := stepFor(cp, taskID, title, mine)
		if taskID != "" {
			aliases[session+":"+taskID] = id
			mine[id] = true
		}
		return id
	}
	pending := map[string]*ckpt.StepChange{}
	var order []string
	change := func(id string) *ckpt.StepChange {
		if ch, ok := pending[id]; ok {
			return ch
		}
		pending[id] = &ckpt.StepChange{ID: id}
		order = append(order, id)
		return pending[id]
	}
	for _, it := range items {
		id := resolve(it.TaskID, it.Title)
		cur := stepOf(cp, id)
		ch := change(id)
		if it.Title != "" && (cur == nil || cur.Title != it.Title) && (cur == nil || !cur.Status.Finished() || cur.Title == "") {
			ch.Title = shorten(Redact(it.Title), 200)
		}
		if n := shortenMulti(Redact(it.Notes), 500); n != "" && (cur == nil || cur.Notes != n) {
			ch.Notes = n
		}
		if it.Deleted {
			ch.Notes = "deleted from the agent's plan"
		}
		if it.Status != "" && (cur == nil && it.Status != ckpt.StepPending || cur != nil && statusRank(it.Status) > statusRank(cur.Status)) {
			ch.Status = it.Status
		}
		for _, b := range it.BlockedBy {
			dep := resolve(b, "")
			if cur == nil || !containsStr(cur.DependsOn, dep) {
				ch.DependsOn = append(ch.DependsOn, dep)
			}
		}
		for _, b := range it.Blocks {
			other := resolve(b, "")
			if o := stepOf(cp, other); o == nil || !containsStr(o.DependsOn, id) {
				oc := change(other)
				oc.DependsOn = append(oc.DependsOn, id)
			}
		}
	}
	for _, id := range order {
		ch := pending[id]
		if ch.Title != "" || ch.Notes != "" || ch.Status != "" || len(ch.DependsOn) > 0 || stepOf(cp, id) == nil {
			changes = append(changes, *ch)
		}
	}
	for k, id := range aliases {
		if known[k] == id {
			delete(aliases, k)
		}
	}
	return changes, aliases
}

// stepFor picks the step a task is: an existing step of the same title
// (the agent's own, a plan.md's, an earlier session's task still open)
// that is not already one of this session's tasks (mine), else
// "task-<client ID>" (TaskCreate, the first free one) or "todo-<slug of
// the text>" (a list item, so the same text is always the same step).
func stepFor(cp *ckpt.Checkpoint, taskID, title string, mine map[string]bool) string {
	if t := normTitle(title); t != "" {
		for _, s := range cp.Steps {
			if mine[s.ID] || normTitle(s.Title) != t {
				continue
			}
			if !isPlanToolStep(s.ID) || taskID != "" && !s.Status.Finished() {
				return s.ID
			}
		}
	}
	if taskID == "" {
		slug := sanitizeSegment(strings.ToLower(strings.Join(strings.Fields(title), "-")))
		if len(slug) > 48 {
			slug = strings.TrimRight(slug[:48], "-.")
		}
		if slug == "" {
			slug = "item"
		}
		return "todo-" + slug
	}
	base := "task-" + orDash(sanitizeSegment(taskID))
	id := base
	for n := 2; stepOf(cp, id) != nil; n++ {
		// taken by another session's task of the same number
		id = fmt.Sprintf("%s-%d", base, n)
	}
	return id
}

func isPlanToolStep(id string) bool {
	return strings.HasPrefix(id, "task-") || strings.HasPrefix(id, "todo-")
}

func normTitle(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.TrimSpace(s)), " "))
}

func stepOf(cp *ckpt.Checkpoint, id string) *ckpt.Step {
	if i := cp.StepIndex(id); i >= 0 {
		return &cp.Steps[i]
	}
	return nil
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// planTaskMap is meta.plan_tasks: "<client session>:<task ID>" to step ID,
// so that a session's TaskUpdate finds the step its TaskCreate made, and
// another session's task 1 is another step.
func planTaskMap(cp *ckpt.Checkpoint) map[string]string {
	m := map[string]string{}
	if raw, ok := cp.Meta["plan_tasks"]; ok {
		_ = json.Unmarshal(raw, &m)
	}
	return m
}

// recordPlan records a plan tool call as steps: first the new task IDs in
// meta.plan_tasks, then one step event per changed step, each keyed by the
// tool call and the step so a retried hook appends nothing.
func (c *hookCall) recordPlan(cp *ckpt.Checkpoint, items []planItem) {
	changes, aliases := planSteps(cp, c.in.SessionID, items)
	key := func(suffix string) string {
		if c.in.ToolUseID == "" {
			return ""
		}
		return "hook:plan:" + c.in.ToolUseID + ":" + suffix
	}
	if len(aliases) > 0 {
		m := planTaskMap(cp)
		for k, v := range aliases {
			m[k] = v
		}
		raw, _ := json.Marshal(m)
		if _, err := c.append(request.Update{Meta: map[string]json.RawMessage{"plan_tasks": raw}}, key("map")); err != nil {
			c.warn("%s: recording the plan's task IDs: %v", c.id, err)
			return
		}
	}
	for _, ch := range changes {
		step := request.Step{Step: ch.ID, Add: true, Title: ch.Title, Status: ch.Status, Notes: ch.Notes, After: ch.DependsOn, Actor: c.agent().ID}
		if _, err := c.append(step, key(ch.ID)); err != nil {
			c.warn("%s: recording plan step %s: %v", c.id, ch.ID, err)
			return
		}
	}
}

// raw is the value of member name, nil when there is none.
func (ms members) raw(name string) json.RawMessage {
	r, _ := ms.get(name)
	return r
}

// planTool records a plan tool call's tasks as the checkpoint's steps.
func (c *hookCall) planTool(items []planItem) {
	if len(items) == 0 {
		c.presence(ckpt.PresenceWorking, "")
		return
	}
	cp, _, err := c.get(true)
	if err != nil {
		c.warn("%s: %v", c.id, err)
		return
	}
	c.recordPlan(cp, items)
	c.signal(ckpt.PresenceWorking, "")
}
