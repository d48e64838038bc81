package claude

import (
	"context"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// PlanTriggers are plan.md's (seed 004) event triggers for a checkpoint that tracks
// a plan.md (plan.Triggers). Each reports whether the checkpoint tracks a
// plan; one that does not is left alone.
type PlanTriggers interface {
	// SessionStart verifies plan.md against the checksum (re-parsing a
	// plan changed outside the session); crashed logs session_crash first.
	SessionStart(ctx context.Context, c *ckpt.Checkpoint, crashed bool) (bool, error)
	// SubagentStarted logs subagent_started with the tasks brief (what the
	// subagent was told) names, assigns them to it, and saves
	// recovery.json.
	SubagentStarted(ctx context.Context, c *ckpt.Checkpoint, agentType, brief string) (bool, error)
	// SubagentStopped credits what the subagent ticked in plan.md to
	// subagent:<type> and logs subagent_stopped.
	SubagentStopped(ctx context.Context, c *ckpt.Checkpoint, agentType string) (bool, error)
	// Backup is the every-5th-prompt checkpoint of .checkpoint/.
	Backup(ctx context.Context, c *ckpt.Checkpoint) (bool, error)
	// Final is the SessionEnd/Compact checkpoint with session notes.
	Final(ctx context.Context, c *ckpt.Checkpoint, notes string) (bool, error)
}

// planCall runs one trigger when the handler has them, warns on failure,
// and returns whether the checkpoint tracks a plan, with its state read
// again when it does (the trigger may have stored a sync).
func (c *hookCall) planCall(cp *ckpt.Checkpoint, what string, run func(PlanTriggers) (bool, error)) (*ckpt.Checkpoint, bool) {
	if c.h.Plan == nil || cp == nil {
		return cp, false
	}
	tracked, err := run(c.h.Plan)
	if err != nil {
		c.warn("%s: plan %s: %v", c.id, what, err)
	}
	if !tracked {
		return cp, false
	}
	if next, err := c.h.Store.Get(c.ctx, c.id, 0); err == nil {
		cp = next
	}
	return cp, true
}

// crashedBefore reports a session start on a live checkpoint whose last
// session did not end cleanly (no SessionEnd: its presence is not ended).
func crashedBefore(cp *ckpt.Checkpoint, source string) bool {
	if source != "startup" && source != "resume" || !cp.Status.Live() {
		return false
	}
	p := cp.Heartbeat.Presence
	return p != nil && p.State != "" && p.State != ckpt.PresenceEnded
}

// subagentStart runs plan.md's (seed 004) subagent_started trigger for a checkpoint
// that exists and tracks a plan.
func (c *hookCall) subagentStart() {
	if c.h.Plan == nil || strings.TrimSpace(c.in.AgentType) == "" {
		return
	}
	cp, err := c.h.Store.Get(c.ctx, c.id, 0)
	if err != nil {
		return
	}
	kind := strings.TrimSpace(c.in.AgentType)
	brief := c.takeSpawn(kind)
	c.planCall(cp, "subagent start", func(p PlanTriggers) (bool, error) {
		return p.SubagentStarted(c.ctx, cp, kind, brief)
	})
}

// maxSpawns bounds the subagents remembered between their Task call and
// their start; maxBrief what is kept of each one's brief.
const (
	maxSpawns = 8
	maxBrief  = 16 << 10
)

// noteSpawn remembers, at the PreToolUse of Claude Code's Task (or Agent)
// tool, the subagent it asks for and what it tells it (description and
// prompt): SubagentStart, whose payload names only the type, takes it to
// tell which of plan.md's tasks the subagent was given. PreToolUse is a
// presence-only call (no plan triggers are wired): the brief is kept
// whether or not the checkpoint tracks a plan, at most maxSpawns of them.
func (c *hookCall) noteSpawn() {
	if c.h.StateDir == "" || c.in.ToolName != "Task" && c.in.ToolName != "Agent" {
		return
	}
	args, ok := objectMembers(c.in.ToolInput)
	if !ok {
		return
	}
	field := func(k string) string { raw, _ := args.get(k); return lenientString(raw) }
	kind := strings.TrimSpace(field("subagent_type"))
	if kind == "" {
		return
	}
	brief := field("description") + "\n" + field("prompt")
	if len(brief) > maxBrief {
		brief = brief[:maxBrief]
	}
	st := loadState(c.h.counterDir(), c.id)
	st.Spawns = append(st.Spawns, spawn{Type: kind, Brief: brief})
	if n := len(st.Spawns) - maxSpawns; n > 0 {
		st.Spawns = st.Spawns[n:]
	}
	if err := saveState(c.h.counterDir(), c.id, st); err != nil {
		c.warn("%s: %v", c.id, err)
	}
}

// takeSpawn returns and forgets the brief of the oldest subagent of kind
// asked for and not started yet, "" when there is none.
func (c *hookCall) takeSpawn(kind string) string {
	if c.h.StateDir == "" {
		return ""
	}
	st := loadState(c.h.counterDir(), c.id)
	for i, s := range st.Spawns {
		if s.Type == kind {
			st.Spawns = append(st.Spawns[:i], st.Spawns[i+1:]...)
			if err := saveState(c.h.counterDir(), c.id, st); err != nil {
				c.warn("%s: %v", c.id, err)
			}
			return s.Brief
		}
	}
	return ""
}
