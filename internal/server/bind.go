package server

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// bind makes an event written with an agent-bound token record that
// agent, whatever the client claimed: the event's actor, and the agent
// fields inside its data (the checkpoint's agent set by a created or update
// event, a resumed session's agent, a takeover's new agent, and each
// step's by). A step's by that names a role inside the agent's own session
// ("main", "subagent:<type>") is kept. Snapshots (imported, restored,
// synced, archives) are left alone: they record an earlier state, agent
// included. A token bound to no agent changes nothing.
func (g Grant) bind(e ckpt.Event) (ckpt.Event, error) {
	e.Actor = g.actor(e.Actor)
	if g.Agent == "" {
		return e, nil
	}
	var err error
	switch e.Type {
	case ckpt.EventCreated:
		err = rebind(&e, func(d *ckpt.Created) {
			d.Agent = g.agent(d.Agent)
			for i := range d.Steps {
				d.Steps[i].By = g.by(d.Steps[i].By)
			}
		})
	case ckpt.EventUpdate:
		err = rebind(&e, func(d *ckpt.Patch) {
			if d.Agent != nil {
				d.Agent = g.agent(d.Agent)
			}
		})
	case ckpt.EventStep:
		err = rebind(&e, func(d *ckpt.StepChange) { d.By = g.by(d.By) })
	case ckpt.EventResumed:
		err = rebind(&e, func(d *ckpt.SessionChange) {
			if d.Agent != nil {
				d.Agent = g.agent(d.Agent)
			}
		})
	case ckpt.EventTakenOver:
		err = rebind(&e, func(d *ckpt.Takeover) { d.To = *g.agent(&d.To) })
	}
	return e, err
}

// agent is the agent a bound token records in place of claimed: the
// token's, keeping only the claimed type (claude-code, codex…), which says
// what runs, not who.
func (g Grant) agent(claimed *ckpt.Agent) *ckpt.Agent {
	a := &ckpt.Agent{ID: g.Agent, Name: g.Agent}
	if claimed != nil {
		a.Type = claimed.Type
	}
	return a
}

// by is a step's by as a bound token records it.
func (g Grant) by(claimed string) string {
	if claimed == "" || claimed == "main" || strings.HasPrefix(claimed, "subagent:") {
		return claimed
	}
	return g.Agent
}

// rebind decodes e's data as a D, lets fix change it and encodes it back.
// Data that does not decode is left for the store to refuse.
func rebind[D any](e *ckpt.Event, fix func(*D)) error {
	var d D
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil
	}
	fix(&d)
	data, err := json.Marshal(&d)
	if err != nil {
		return fmt.Errorf("%w: event data: %v", ckpt.ErrInvalid, err)
	}
	e.Data = data
	return nil
}
