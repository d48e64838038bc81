package render

import ckpt "github.com/ckpt-dev/ckpt"

// Continuation is what a resume, takeover or restart hands the session
// that goes on: the continuation prompt and, after a takeover or restart,
// the ID the previous state was archived under. Its JSON is the Prompt
// object with archived_as added.
type Continuation struct {
	Prompt
	// ArchivedAs is the ID the previous state was archived under
	// (takeover, restart); empty for a resume.
	ArchivedAs string `json:"archived_as,omitempty"`
}

// NewContinuation is the continuation of c after an operation that
// archived the previous state as archivedAs ("" for none).
func NewContinuation(c *ckpt.Checkpoint, archivedAs string) Continuation {
	return Continuation{Prompt: NewPrompt(c), ArchivedAs: archivedAs}
}

// Text is the continuation for a person or an agent to read: a line
// naming the archive when there is one, a blank line, then the Markdown
// prompt.
func (c Continuation) Text() string {
	if c.ArchivedAs == "" {
		return c.Markdown()
	}
	return "archived the previous state as " + c.ArchivedAs + "\n\n" + c.Markdown()
}
