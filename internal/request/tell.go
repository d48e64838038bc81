package request

import (
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Tell is a message for the agent working on a checkpoint: recorded in the
// history, sent by the write's actor, and delivered once into the agent's
// context at its next hook (docs/hooks.md, "Messages").
type Tell struct{ Text string }

// Build implements Request.
func (r Tell) Build(Names) (ckpt.EventType, any, error) {
	if strings.TrimSpace(r.Text) == "" {
		return "", nil, invalid("the message is empty: say what the agent should know")
	}
	if len(r.Text) > ckpt.MaxMessageBytes {
		return "", nil, invalid("the message is %d bytes; the limit is %d: shorten it, or write it to a file and tell the agent the path", len(r.Text), ckpt.MaxMessageBytes)
	}
	return ckpt.EventTold, ckpt.Tell{Text: r.Text}, nil
}
