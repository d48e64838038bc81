package cli

import (
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// resumeClient is the client `ckpt resume --for` hands the work to, by the
// name a user gives: the client's name, the command that starts an
// interactive session with a first message, and its hooks' install name.
// (A switch: a map literal is built at every process's start.)
func resumeClient(client string) (c resumeTarget, ok bool) {
	switch client {
	case "claude":
		return resumeTarget{"Claude Code", "claude", "claude"}, true
	case "codex":
		return resumeTarget{"Codex", "codex", "codex"}, true
	case "gemini":
		return resumeTarget{"Gemini CLI", "gemini -i", "gemini"}, true
	}
	return c, false
}

type resumeTarget struct{ name, command, hooks string }

// checkResumeFor refuses a --for that names no client ckpt knows.
func checkResumeFor(client string) error {
	if _, ok := resumeClient(client); client == "" || ok {
		return nil
	}
	return fmt.Errorf("%w: --for %q: use claude, codex or gemini", ckpt.ErrInvalid, client)
}

// continueIn is what `ckpt resume --for CLIENT` prints after the prompt:
// the command that continues the work in that client, tied to the
// checkpoint by CKPT_ID so that its hooks record into it and give the new
// session the prompt at its start.
func continueIn(client, id string) string {
	c, _ := resumeClient(client)
	msg := "Continue the work of checkpoint " + id + " from where it stopped."
	return fmt.Sprintf("\n---\n\nContinue in %s, from the project directory:\n\n    CKPT_ID=%s %s %s\n\n"+
		"With ckpt's hooks installed for it (`ckpt hooks install %s`), the new session starts with the prompt above and records its work into %s; without them, give it the prompt above as its first message.\n",
		c.name, shellQuote(id), c.command, shellQuote(msg), c.hooks, id)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// budgetText is the continuation's text within budget tokens (0: the
// default), as Text gives it.
func budgetText(c render.Continuation, budget int) string {
	if budget == render.DefaultBudget || budget <= 0 {
		return c.Text()
	}
	md := c.MarkdownBudget(budget)
	if c.ArchivedAs == "" {
		return md
	}
	return "archived the previous state as " + c.ArchivedAs + "\n\n" + md
}
