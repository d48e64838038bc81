package request

import (
	"context"
	"errors"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Resume starts a new session on a checkpoint (ckpt.ResumeCheckpoint),
// with the rules every surface shares: the whole history is verified
// first, and a resuming agent that is not the checkpoint's becomes its
// agent.
type Resume struct {
	// Agent is the resuming agent, "" for the recorded one. When it is not
	// the checkpoint's agent it replaces it, described by AgentType and
	// AgentName (which describe a new agent only).
	Agent, AgentType, AgentName string
	// Force resumes even a done, not-resumable or archived checkpoint.
	Force bool
}

// Resumed is what Resume.Run did.
type Resumed struct {
	// State is the checkpoint after the session.resumed event; when
	// Damage is set, the state as last read (nil if it could not be).
	State *ckpt.Checkpoint
	// Was is the agent Agent replaced; "" when none was replaced.
	Was string
	// Damage is why no session was started: verifying the history failed
	// (a *ckpt.DamagedError, or the error that stopped the verification).
	Damage error
}

// Run resumes checkpoint id with l (its time, actor, session and key). A
// damaged history starts no session: Run returns Resumed.Damage and, when
// the damage is ckpt.ErrCorrupt, the state as last read with a nil error
// (the surface shows the prompt of that state, marked damaged), else the
// error. Errors name fields with n ("agent", "agent_type", "agent_name").
func (r Resume) Run(ctx context.Context, st ckpt.Store, id string, l ckpt.Lifecycle, n Names) (Resumed, error) {
	if err := ckpt.ValidateID(id); err != nil {
		return Resumed{}, err
	}
	if r.Agent == "" && (r.AgentType != "" || r.AgentName != "") {
		return Resumed{}, invalid("%s and %s describe a new agent: pass %s NAME with them", n.of("agent_type"), n.of("agent_name"), n.of("agent"))
	}
	if _, err := ckpt.VerifyChain(ctx, st, id); err != nil && !errors.Is(err, ckpt.ErrNotFound) {
		if !errors.Is(err, ckpt.ErrCorrupt) {
			return Resumed{Damage: err}, err
		}
		c, gerr := st.Get(ctx, id, 0)
		if gerr != nil {
			return Resumed{Damage: err}, errors.Join(err, gerr)
		}
		return Resumed{State: c, Damage: err}, nil
	}
	var out Resumed
	var agent *ckpt.Agent
	if r.Agent != "" {
		// Only a different agent replaces the recorded one, so that the
		// same agent keeps its recorded type and name.
		cur, err := st.Get(ctx, id, 0)
		if err != nil {
			return Resumed{}, err
		}
		if r.Agent != cur.Agent.ID {
			agent, out.Was = &ckpt.Agent{ID: r.Agent, Type: r.AgentType, Name: r.AgentName}, cur.Agent.ID
		} else if r.AgentType != "" || r.AgentName != "" {
			return Resumed{}, invalid("%s and %s describe a new agent, and %s is already %s's: leave them out", n.of("agent_type"), n.of("agent_name"), id, r.Agent)
		}
	}
	c, err := ckpt.ResumeCheckpoint(ctx, st, id, l, agent, r.Force)
	if err != nil {
		return Resumed{}, err
	}
	out.State = c
	return out, nil
}
