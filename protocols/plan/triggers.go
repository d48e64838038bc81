package plan

import (
	"context"
	"path/filepath"
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
// saves recovery.json (the document's "pre_subagent_spawn").
func (t Triggers) SubagentStarted(ctx context.Context, c *ckpt.Checkpoint, agentType string) (bool, error) {
	path := t.planFile(c)
	if path == "" {
		return false, nil
	}
	if err := appendEvents(path, Event{TS: t.now(), Event: EventSubagentStarted, AgentType: agentType}); err != nil {
		return true, err
	}
	_, ok, err := t.sync(ctx, c, SyncStoreOptions{Recovery: "pre_subagent_spawn"})
	return ok, err
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
	by := "subagent:" + agentType
	if CheckBy("subagent", by) != nil {
		by = "subagent:" + sanitizeType(agentType)
	}
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
