package claude

import (
	"fmt"
	"strings"
)

// Event is a hook event ckpt handles, named as Claude Code names it. Codex
// uses the same names; Gemini CLI's names map onto these (see ParseEvent).
type Event string

// The hook events ckpt handles.
const (
	EventSessionStart     Event = "SessionStart"
	EventUserPromptSubmit Event = "UserPromptSubmit"
	EventPostToolUse      Event = "PostToolUse"
	EventSubagentStop     Event = "SubagentStop"
	EventStop             Event = "Stop"
	EventPreCompact       Event = "PreCompact"
	EventSessionEnd       Event = "SessionEnd"
)

// Events lists the events ckpt handles, in the order a session meets them.
var Events = []Event{EventSessionStart, EventUserPromptSubmit, EventPostToolUse, EventSubagentStop, EventStop, EventPreCompact, EventSessionEnd}

// eventNames maps a normalised name (lower case, no separators) to an event.
// Gemini CLI's names are here too: BeforeAgent is its UserPromptSubmit,
// AfterTool its PostToolUse, AfterAgent its Stop, PreCompress its PreCompact.
var eventNames = map[string]Event{
	"sessionstart":     EventSessionStart,
	"userpromptsubmit": EventUserPromptSubmit,
	"beforeagent":      EventUserPromptSubmit,
	"posttooluse":      EventPostToolUse,
	"aftertool":        EventPostToolUse,
	"subagentstop":     EventSubagentStop,
	"stop":             EventStop,
	"afteragent":       EventStop,
	"precompact":       EventPreCompact,
	"precompress":      EventPreCompact,
	"sessionend":       EventSessionEnd,
}

// ParseEvent maps an event name to the Event ckpt handles. It ignores case
// and the separators '-', '_' and ' ', so "SessionStart", "session-start"
// and "session_start" are one event, and it accepts Gemini CLI's names
// (BeforeAgent, AfterTool, AfterAgent, PreCompress). The error names the
// events ckpt handles.
func ParseEvent(name string) (Event, error) {
	norm := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', ' ':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, strings.TrimSpace(name))
	if e, ok := eventNames[norm]; ok {
		return e, nil
	}
	return "", fmt.Errorf("unknown hook event %q: ckpt handles SessionStart, UserPromptSubmit, PostToolUse, SubagentStop, Stop, PreCompact and SessionEnd (Gemini CLI: BeforeAgent, AfterTool, AfterAgent, PreCompress)", name)
}
