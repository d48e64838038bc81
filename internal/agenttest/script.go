// Package agenttest runs the real agent clients (Claude Code, Codex CLI,
// Gemini CLI) headless against a local mock of their model API, with ckpt's
// hooks installed, so tests can check what ckpt records from the hooks the
// clients really fire.
//
// It has three parts:
//
//   - Server is the mock: one loopback HTTP server that speaks the
//     Anthropic Messages API (streaming), the OpenAI Responses API and the
//     Gemini generateContent / streamGenerateContent API. It answers from
//     a Script and records every request it received.
//   - Clients finds the pinned client binaries that .ci/run installs
//     (CKPT_AGENT_CLIENTS); a test skips when one is missing, and fails
//     when CI=true.
//   - Session prepares a throwaway HOME, a git project with ckpt's hooks
//     installed (and optionally a recording hook beside them) and runs a
//     client headless in it.
package agenttest

import (
	"encoding/json"
	"strings"
	"time"
)

// Step is one model response of a Script. Exactly one of Text, Tool, Error
// is normally set; Text and Tool together make a response that says
// something and then calls the tool. Delay holds the response back first
// (after the headers for a stream, so the client is in its request).
type Step struct {
	Text  string
	Tool  *ToolCall
	Error *APIError
	Delay time.Duration
	// InputTokens is the prompt size the response reports (usage); a large
	// one makes Claude Code believe its context is full and compact.
	InputTokens int
}

// ToolCall is a tool the model calls, with its arguments. Name is the
// client's own tool name (Bash, TaskCreate, exec_command, apply_patch,
// write_file, run_shell_command…). Input is the arguments object; for
// Codex's freeform apply_patch, Raw holds the patch text instead.
type ToolCall struct {
	Name  string
	Input map[string]any
	Raw   string
}

// APIError is an error response of the model API: the HTTP status and the
// provider's error type and message (Anthropic: overloaded_error at 529).
type APIError struct {
	Status  int
	Type    string
	Message string
}

// Say is a Step that answers with text, ending the model's turn.
func Say(text string) Step { return Step{Text: text} }

// Call is a Step that calls a tool with input.
func Call(name string, input map[string]any) Step {
	return Step{Tool: &ToolCall{Name: name, Input: input}}
}

// Fail is a Step that answers with an API error.
func Fail(status int, typ, message string) Step {
	return Step{Error: &APIError{Status: status, Type: typ, Message: message}}
}

// Conversation is the scripted answers of one conversation: the model's
// responses in order. A request belongs to the first Conversation whose
// Match occurs in the conversation's first user message (the prompt, or a
// subagent's task), and is answered with Steps[n], n being the number of
// model responses the request already carries in its history. So a client
// that retries a request gets the same answer, a subagent gets its own
// script, and a resumed session goes on where the first run stopped.
type Conversation struct {
	Match string
	Steps []Step
}

// Script is what the mock answers. A request that matches no Conversation,
// or asks past the end of its Steps, gets Default (a short text), so a
// client's side requests (titles, routing, summaries) never fail.
type Script struct {
	Conversations []Conversation
	// Default answers unscripted requests; empty means "OK."
	Default string
}

// pick returns the step for a conversation whose first user text is first
// and whose history holds turns model responses.
func (s *Script) pick(first string, turns int) (Step, bool) {
	for _, c := range s.Conversations {
		if !strings.Contains(first, c.Match) {
			continue
		}
		if turns < len(c.Steps) {
			return c.Steps[turns], true
		}
		break
	}
	d := s.Default
	if d == "" {
		d = "OK."
	}
	return Say(d), false
}

// Request is one request the mock received.
type Request struct {
	API    string // anthropic, openai or gemini
	Path   string // the URL path, e.g. /v1/messages
	Body   json.RawMessage
	First  string // the first user message's text
	Turns  int    // model responses already in the history
	Texts  []string
	Script bool // answered from a Conversation (else Default)
}

// Contains reports whether s occurs in any text of the request (system
// prompt, messages, tool results): what the model was shown.
func (r Request) Contains(s string) bool {
	for _, t := range r.Texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// AllText is every text of the request joined by newlines.
func (r Request) AllText() string { return strings.Join(r.Texts, "\n") }
