package request

import (
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// The writes the agent clients' hooks and the seed-format mirrors make on
// their own (internal/claude, internal/fourstep, internal/mirror): no
// person asked for them, but they are built here with the same rules as
// every surface's.

// JoinSession starts a new session of the checkpoint's agent: a client
// session continuing the work (a hook's prompt in a session the checkpoint
// has not recorded). It is the resumed event, without the checks and the
// archive of Resume, which a person asks for.
type JoinSession struct{ Session string }

// Build implements Request.
func (r JoinSession) Build(Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.Session) == "" {
		return "", nil, invalid("the session ID is empty: a session is joined by its ID")
	}
	return ckpt.EventResumed, ckpt.SessionChange{Session: ckpt.Session{ID: r.Session}}, nil
}

// Code records where the checkpoint's code is now (codestate.Probe).
type Code struct{ State *ckpt.CodeState }

// Build implements Request.
func (r Code) Build(Names) (ckpt.EventType, any, error) {
	if r.State == nil {
		return "", nil, invalid("no code state to record")
	}
	return ckpt.EventCode, r.State, nil
}

// Delivered claims the messages IDs as delivered to the agent, by Via (the
// client and its event) in Session: a message is delivered once.
type Delivered struct {
	IDs     []string
	Via     string
	Session string
}

// Build implements Request.
func (r Delivered) Build(Names) (ckpt.EventType, any, error) {
	if len(nonEmpty(r.IDs)) == 0 {
		return "", nil, invalid("no message to claim: name the messages delivered")
	}
	return ckpt.EventDelivered, ckpt.Delivery{IDs: r.IDs, Via: r.Via, Session: r.Session}, nil
}

// Import records state, read from a seed-format file (Source:
// FORMAT:PATH), as one imported snapshot: the first event of a new
// checkpoint, or a new snapshot of an existing one (ckpt import, mirror
// sync).
type Import struct {
	State  *ckpt.Checkpoint
	Source string
}

// Build implements Request.
func (r Import) Build(Names) (ckpt.EventType, any, error) {
	if r.State == nil {
		return "", nil, invalid("no state to import")
	}
	return ckpt.EventImported, ckpt.Snapshot{State: *r.State, Source: r.Source}, nil
}
