package plan

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Triggers are plan.md's (seed 004) event triggers for a checkpoint that tracks a
// plan.md (its plan meta names it, as ckpt plan sync records it), as the
// hooks call them:
//
//	SessionStart          load state, verify the checksum (re-parse plan.md when it changed outside the session)
//	SubagentStart         history subagent_started, recovery.json "pre_subagent_spawn"
//	SubagentStop          re-parse plan.md, crediting newly ticked tasks to subagent:<type>; history subagent_stopped
//	UserPromptSubmit (5th) a checkpoint of .checkpoint/ (state.json, recovery.json)
//	SessionEnd/Compact    a final checkpoint with sessionNotes
//
// Every method does nothing (and reports false) for a checkpoint that does
// not track a plan. The zero Now is time.Now.
type Triggers struct {
	Store   ckpt.Store
	Project string // the project directory recorded plan paths are relative to
	Now     func() time.Time
	Actor   ckpt.Actor
}

// planFile is the absolute plan.md c tracks, or "".
func (t Triggers) planFile(c *ckpt.Checkpoint) string {
	p := filepath.FromSlash(PathOf(c))
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(t.Project, p)
	}
	return filepath.Clean(p)
}

func (t Triggers) now() time.Time {
	if t.Now == nil {
		return time.Now().UTC()
	}
	return t.Now().UTC()
}

// sync runs SyncStore for c's plan with o's extras.
func (t Triggers) sync(ctx context.Context, c *ckpt.Checkpoint, o SyncStoreOptions) (Report, bool, error) {
	path := t.planFile(c)
	if path == "" {
		return Report{}, false, nil
	}
	o.Plan, o.Path, o.ID, o.Now, o.Actor = PathOf(c), path, c.ID, t.now(), t.Actor
	if o.By == "" {
		o.By = "main"
	}
	rep, err := SyncStore(ctx, t.Store, o)
	return rep, true, err
}

// SessionStart loads c's plan state and verifies plan.md against the
// checksum: a plan changed outside the session (a task unticked by hand)
// is re-parsed (history checksum_mismatch) and stored. crashed says the
// previous session ended without SessionEnd: history gets session_crash
// first, naming the last known state.
func (t Triggers) SessionStart(ctx context.Context, c *ckpt.Checkpoint, crashed bool) (bool, error) {
	path := t.planFile(c)
	if path == "" {
		return false, nil
	}
	if crashed {
		if err := appendEvents(path, Event{TS: t.now(), Event: EventSessionCrash, LastKnownState: recoveryFile}); err != nil {
			return true, err
		}
	}
	_, ok, err := t.sync(ctx, c, SyncStoreOptions{})
	return ok, err
}

// SubagentStarted logs subagent_started for a subagent of agentType and
// saves recovery.json (the document's "pre_subagent_spawn"). brief is what
// the subagent was told to do (the Task tool's description and prompt):
// the open tasks of plan.md it names (TasksNamedIn) are the line's "tasks"
// and are added to the subagent's assignedTasks in state.json's agents.
func (t Triggers) SubagentStarted(ctx context.Context, c *ckpt.Checkpoint, agentType, brief string) (bool, error) {
	path := t.planFile(c)
	if path == "" {
		return false, nil
	}
	var tasks []string
	if data, err := os.ReadFile(path); err == nil && strings.TrimSpace(brief) != "" {
		if p, err := Parse(data); err == nil {
			tasks = TasksNamedIn(p, brief)
		}
	}
	if err := appendEvents(path, Event{TS: t.now(), Event: EventSubagentStarted, AgentType: agentType, Tasks: tasks}); err != nil {
		return true, err
	}
	o := SyncStoreOptions{Recovery: "pre_subagent_spawn"}
	if len(tasks) > 0 {
		o.AssignTo, o.Assigned = subagentBy(agentType), tasks
	}
	_, ok, err := t.sync(ctx, c, o)
	return ok, err
}

// subagentBy is the completedBy and agents key of a subagent of agentType.
func subagentBy(agentType string) string {
	by := "subagent:" + agentType
	if CheckBy("subagent", by) != nil {
		by = "subagent:" + sanitizeType(agentType)
	}
	return by
}

// TasksNamedIn returns the IDs of plan.md's open (unchecked) tasks that
// text names, in plan order: by its ID (a whole word: "auth" is not named
// by "auth-middleware"), or by its title (case aside; a title shorter than
// six characters only by its ID).
func TasksNamedIn(p *Plan, text string) []string {
	lower := strings.ToLower(text)
	var out []string
	for _, it := range p.Tasks() {
		if it.Checked || it.ID == "" || slices.Contains(out, it.ID) {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(it.Title))
		if namesWord(text, it.ID) || len(title) >= 6 && strings.Contains(lower, title) {
			out = append(out, it.ID)
		}
	}
	return out
}

// namesWord reports whether text holds id with no ID character ([A-Za-z0-9_-])
// right before or after it.
func namesWord(text, id string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], id)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(id)
		if (i == 0 || !idChar(text[i-1])) && (end == len(text) || !idChar(text[end])) {
			return true
		}
		from = i + 1
	}
}

func idChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// SubagentStopped re-parses plan.md after a subagent of agentType ended:
// the tasks it ticked are credited to subagent:<type> (completedBy, the
// agents map), and history gets subagent_stopped with how many. It
// reports true when c tracks a plan: the plan, not a step of its own, is
// the record of the subagent's work.
func (t Triggers) SubagentStopped(ctx context.Context, c *ckpt.Checkpoint, agentType string) (bool, error) {
	path := t.planFile(c)
	if path == "" {
		return false, nil
	}
	by := subagentBy(agentType)
	rep, _, err := t.sync(ctx, c, SyncStoreOptions{By: by})
	if err != nil {
		return true, err
	}
	n := len(rep.NewlyCompleted)
	return true, appendEvents(path, Event{TS: t.now(), Event: EventSubagentStopped, AgentType: agentType, Completed: &n})
}

// Backup is the document's every-5th-prompt checkpoint: a sync that saves
// recovery.json whatever the count.
func (t Triggers) Backup(ctx context.Context, c *ckpt.Checkpoint) (bool, error) {
	_, ok, err := t.sync(ctx, c, SyncStoreOptions{Recovery: "prompt_backup"})
	return ok, err
}

// Final is the document's SessionEnd/Compact checkpoint: a sync that
// writes notes as state.json's sessionNotes.
func (t Triggers) Final(ctx context.Context, c *ckpt.Checkpoint, notes string) (bool, error) {
	_, ok, err := t.sync(ctx, c, SyncStoreOptions{Notes: notes})
	return ok, err
}

// sanitizeType keeps what a subagent type may hold in completedBy.
func sanitizeType(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}
