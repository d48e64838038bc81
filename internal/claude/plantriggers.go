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
	// SubagentStarted logs subagent_started and saves recovery.json.
	SubagentStarted(ctx context.Context, c *ckpt.Checkpoint, agentType string) (bool, error)
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
	c.planCall(cp, "subagent start", func(p PlanTriggers) (bool, error) {
		return p.SubagentStarted(c.ctx, cp, strings.TrimSpace(c.in.AgentType))
	})
}
