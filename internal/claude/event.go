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

	// Presence events: they only beat, with the state they mean (busy,
	// working, waiting), and write no history.
	EventPreToolUse         Event = "PreToolUse"
	EventPostToolUseFailure Event = "PostToolUseFailure"
	EventSubagentStart      Event = "SubagentStart"
	EventNotification       Event = "Notification"
	EventPermissionRequest  Event = "PermissionRequest"
	EventStopFailure        Event = "StopFailure"
)

// PresenceOnly reports whether e only beats with the presence it means,
// reading nothing and writing no history. SubagentStart is not: for a
// checkpoint that tracks a plan.md it logs plan.md's (seed 004) subagent_started.
func (e Event) PresenceOnly() bool {
	switch e {
	case EventPreToolUse, EventNotification, EventPermissionRequest, EventStopFailure:
		return true
	}
	return false
}

// Events lists the events ckpt handles, in the order a session meets them.
var Events = []Event{EventSessionStart, EventUserPromptSubmit, EventPreToolUse, EventPermissionRequest,
	EventNotification, EventPostToolUse, EventPostToolUseFailure, EventSubagentStart, EventSubagentStop,
	EventStop, EventStopFailure, EventPreCompact, EventSessionEnd}

// eventNamed maps a normalised name (lower case, no separators) to an
// event. Gemini CLI's names are here too: BeforeAgent is its
// UserPromptSubmit, AfterTool its PostToolUse, AfterAgent its Stop,
// PreCompress its PreCompact, BeforeTool its PreToolUse. A switch, not a
// map: a map literal is built at initialisation, in every ckpt process.
func eventNamed(norm string) (Event, bool) {
	switch norm {
	case "sessionstart":
		return EventSessionStart, true
	case "userpromptsubmit", "beforeagent":
		return EventUserPromptSubmit, true
	case "posttooluse", "aftertool":
		return EventPostToolUse, true
	case "subagentstop":
		return EventSubagentStop, true
	case "stop", "afteragent":
		return EventStop, true
	case "precompact", "precompress":
		return EventPreCompact, true
	case "sessionend":
		return EventSessionEnd, true
	case "pretooluse", "beforetool":
		return EventPreToolUse, true
	case "posttoolusefailure":
		return EventPostToolUseFailure, true
	case "subagentstart":
		return EventSubagentStart, true
	case "notification":
		return EventNotification, true
	case "permissionrequest":
		return EventPermissionRequest, true
	case "stopfailure":
		return EventStopFailure, true
	}
	return "", false
}

// ParseEvent maps an event name to the Event ckpt handles. It ignores case
// and the separators '-', '_' and ' ', so "SessionStart", "session-start"
// and "session_start" are one event, and it accepts Gemini CLI's names
// (BeforeAgent, BeforeTool, AfterTool, AfterAgent, PreCompress). The error names the
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
	if e, ok := eventNamed(norm); ok {
		return e, nil
	}
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return "", fmt.Errorf("unknown hook event %q: ckpt handles %s (Gemini CLI: BeforeAgent, BeforeTool, AfterTool, AfterAgent, PreCompress)", name, strings.Join(names, ", "))
}
