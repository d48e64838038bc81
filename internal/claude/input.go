package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxInputBytes is the largest hook payload ParseInput reads. Payloads carry
// tool results and whole assistant messages, so this is generous; past it
// the payload is refused rather than read into memory.
const MaxInputBytes = 32 << 20

// Input is the JSON a client writes on a hook's stdin, with the fields ckpt
// uses. Every field may be empty: clients and their versions differ in what
// they send, and a missing field is never an error.
//
// The JSON tags are Claude Code's current names; ParseInput also accepts the
// names listed in inputAliases (older Claude Code payloads, camelCase
// clients, Gemini CLI's prompt_response).
type Input struct {
	SessionID      string `json:"session_id,omitempty"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	CWD            string `json:"cwd,omitempty"`
	HookEventName  string `json:"hook_event_name,omitempty"`
	PermissionMode string `json:"permission_mode,omitempty"`
	Model          string `json:"model,omitempty"`

	// Source is how a session started: startup, resume, clear or compact.
	Source string `json:"source,omitempty"`
	// Prompt is the user's prompt (UserPromptSubmit).
	Prompt string `json:"prompt,omitempty"`

	ToolName string `json:"tool_name,omitempty"`
	// ToolInput is the tool's arguments as sent: an object for Claude Code,
	// Codex and Gemini CLI. A JSON string holding an object is unwrapped.
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`

	// StopHookActive is true when the agent is already continuing because a
	// Stop or SubagentStop hook blocked it.
	StopHookActive       bool   `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// AgentID, AgentType and AgentTranscriptPath describe a subagent
	// (SubagentStop). AgentType is the subagent's type, e.g. "Explore".
	AgentID             string `json:"agent_id,omitempty"`
	AgentType           string `json:"agent_type,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`

	// Reason is why a session ended (SessionEnd): clear, logout,
	// prompt_input_exit, other, …
	Reason string `json:"reason,omitempty"`
	// Trigger is what started a compaction (PreCompact): manual or auto.
	Trigger            string `json:"trigger,omitempty"`
	CustomInstructions string `json:"custom_instructions,omitempty"`

	// NotificationType is what a Notification is about: permission_prompt,
	// idle_prompt, elicitation_dialog, auth_success, … (Gemini CLI:
	// ToolPermission). Message is its text.
	NotificationType string `json:"notification_type,omitempty"`
	Message          string `json:"message,omitempty"`
	// Error says why a turn (StopFailure) or a tool (PostToolUseFailure)
	// failed.
	Error string `json:"error,omitempty"`

	// TurnID is Codex's turn identifier.
	TurnID string `json:"turn_id,omitempty"`
}

// inputAliases lists, for each field, the names ParseInput looks for, in
// order; the first present and non-null one wins. tool_output is the name
// of tool_response in early Claude Code payloads; subagent_type is the
// Task tool's name for a subagent's type; prompt_response is Gemini CLI's
// AfterAgent name for the last assistant message.
var inputAliases = []struct {
	names []string
	set   func(in *Input, raw json.RawMessage)
}{
	{[]string{"session_id", "sessionId", "sessionID"}, func(in *Input, r json.RawMessage) { in.SessionID = lenientString(r) }},
	{[]string{"transcript_path", "transcriptPath"}, func(in *Input, r json.RawMessage) { in.TranscriptPath = lenientString(r) }},
	{[]string{"cwd", "workingDirectory"}, func(in *Input, r json.RawMessage) { in.CWD = lenientString(r) }},
	{[]string{"hook_event_name", "hookEventName"}, func(in *Input, r json.RawMessage) { in.HookEventName = lenientString(r) }},
	{[]string{"permission_mode", "permissionMode"}, func(in *Input, r json.RawMessage) { in.PermissionMode = lenientString(r) }},
	{[]string{"model"}, func(in *Input, r json.RawMessage) { in.Model = lenientString(r) }},
	{[]string{"source"}, func(in *Input, r json.RawMessage) { in.Source = lenientString(r) }},
	{[]string{"prompt", "userPrompt"}, func(in *Input, r json.RawMessage) { in.Prompt = lenientString(r) }},
	{[]string{"tool_name", "toolName"}, func(in *Input, r json.RawMessage) { in.ToolName = lenientString(r) }},
	{[]string{"tool_input", "toolInput", "tool_args", "toolArgs"}, func(in *Input, r json.RawMessage) { in.ToolInput = unwrapObject(r) }},
	{[]string{"tool_response", "tool_output", "toolResponse", "tool_result", "toolResult"}, func(in *Input, r json.RawMessage) { in.ToolResponse = unwrapObject(r) }},
	{[]string{"tool_use_id", "toolUseId"}, func(in *Input, r json.RawMessage) { in.ToolUseID = lenientString(r) }},
	{[]string{"stop_hook_active", "stopHookActive"}, func(in *Input, r json.RawMessage) { in.StopHookActive = lenientBool(r) }},
	{[]string{"last_assistant_message", "lastAssistantMessage", "prompt_response"}, func(in *Input, r json.RawMessage) { in.LastAssistantMessage = lenientString(r) }},
	{[]string{"agent_id", "agentId"}, func(in *Input, r json.RawMessage) { in.AgentID = lenientString(r) }},
	{[]string{"agent_type", "agentType", "subagent_type", "subagentType"}, func(in *Input, r json.RawMessage) { in.AgentType = lenientString(r) }},
	{[]string{"agent_transcript_path", "agentTranscriptPath"}, func(in *Input, r json.RawMessage) { in.AgentTranscriptPath = lenientString(r) }},
	{[]string{"reason"}, func(in *Input, r json.RawMessage) { in.Reason = lenientString(r) }},
	{[]string{"trigger"}, func(in *Input, r json.RawMessage) { in.Trigger = lenientString(r) }},
	{[]string{"custom_instructions", "customInstructions"}, func(in *Input, r json.RawMessage) { in.CustomInstructions = lenientString(r) }},
	{[]string{"turn_id", "turnId"}, func(in *Input, r json.RawMessage) { in.TurnID = lenientString(r) }},
	{[]string{"notification_type", "notificationType"}, func(in *Input, r json.RawMessage) { in.NotificationType = lenientString(r) }},
	{[]string{"message"}, func(in *Input, r json.RawMessage) { in.Message = lenientString(r) }},
	{[]string{"error", "error_message", "errorMessage"}, func(in *Input, r json.RawMessage) { in.Error = lenientString(r) }},
}

// ParseInput reads a hook payload. An empty body (or only white space) is
// not an error: it gives the zero Input. A body that is not one JSON object,
// or is larger than MaxInputBytes, is an error that says so. Fields of the
// wrong type are read leniently (a number where a string was expected gives
// its text; an object gives ""); unknown fields are ignored. ParseInput
// never panics.
//
// Where a SessionStart payload gives its source, or a SessionEnd payload its
// reason, as trigger (early Gemini CLI), Source or Reason is filled from it.
func ParseInput(r io.Reader) (Input, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return Input{}, fmt.Errorf("reading the hook payload: %w", err)
	}
	if len(body) > MaxInputBytes {
		return Input{}, fmt.Errorf("hook payload is larger than %d MiB; ckpt ignored it", MaxInputBytes>>20)
	}
	body = bytes.TrimPrefix(bytes.TrimSpace(body), []byte("\ufeff"))
	if len(bytes.TrimSpace(body)) == 0 {
		return Input{}, nil
	}
	fields, ok := objectMembers(body)
	if !ok {
		return Input{}, notAnObject(body)
	}
	var in Input
	for _, a := range inputAliases {
		for _, name := range a.names {
			raw, ok := fields.get(name)
			if !ok || isNull(raw) {
				continue
			}
			a.set(&in, raw)
			break
		}
	}
	switch ev, _ := ParseEvent(in.HookEventName); ev {
	case EventSessionStart:
		if in.Source == "" {
			in.Source = in.Trigger
		}
	case EventSessionEnd:
		if in.Reason == "" {
			in.Reason = in.Trigger
		}
	}
	return in, nil
}

// notAnObject says why body, which is not one valid JSON object, was
// refused.
func notAnObject(body []byte) error {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil {
		return fmt.Errorf("hook payload is not a JSON object: %v", err)
	}
	if fields == nil {
		return fmt.Errorf("hook payload is null, not a JSON object")
	}
	return fmt.Errorf("hook payload has data after its JSON object")
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// lenientString reads a JSON string; a number or boolean gives its text,
// anything else "".
func lenientString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		if s, ok := plainString(raw); ok {
			return s
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	case 't', 'f':
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			return strconv.FormatBool(b)
		}
	case '{', '[', 'n':
		return ""
	default:
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return n.String()
		}
	}
	return ""
}

// lenientBool reads true/false, the strings "true"/"1"/"yes" and a non-zero
// number as true.
func lenientBool(raw json.RawMessage) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	switch strings.ToLower(strings.TrimSpace(lenientString(raw))) {
	case "true", "1", "yes":
		return true
	}
	var f float64
	return json.Unmarshal(raw, &f) == nil && f != 0
}

// unwrapObject returns raw, or, when raw is a JSON string whose text is
// itself a JSON object (some clients send tool arguments that way), that
// object.
func unwrapObject(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			t := strings.TrimSpace(s)
			if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
				return json.RawMessage(t)
			}
		}
	}
	return append(json.RawMessage(nil), raw...)
}

// FileChange is a file a tool call wrote. Created is true when the client
// says the file is new (Claude Code's Write of a new file, a Codex patch's
// "Add File").
type FileChange struct {
	Path    string
	Created bool
}

// editTool reports whether a tool writes files, by normalised name (lower
// case, no '_' or '-'): Claude Code's Edit, Write, MultiEdit and
// NotebookEdit, Codex's apply_patch, Gemini CLI's write_file and replace.
func editTool(n string) bool {
	switch n {
	case "edit", "write", "multiedit", "notebookedit",
		"applypatch", "writefile", "replace", "editfile", "createfile":
		return true
	}
	return false
}

// IsEditTool reports whether name is a tool that writes files. An empty
// name counts as one: a payload without tool_name that names a file came
// from a hook registered for edits.
func IsEditTool(name string) bool {
	if name == "" {
		return true
	}
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	return editTool(n)
}

// Files returns the files the tool call wrote, each once, in the order
// named, as the client gave them (absolute, or relative to CWD). It reads
// tool_input's file_path (or filePath, path, notebook_path, absolute_path),
// the file paths of an edits list, and the file headers of a Codex
// apply_patch body. A tool that does not write files (see IsEditTool) gives
// nothing.
func (in Input) Files() []FileChange {
	if !IsEditTool(in.ToolName) {
		return nil
	}
	var out []FileChange
	seen := map[string]int{}
	add := func(p string, created bool) {
		p = strings.TrimSpace(p)
		if p == "" || !utf8.ValidString(p) || strings.ContainsRune(p, 0) {
			return
		}
		if i, ok := seen[p]; ok {
			out[i].Created = out[i].Created || created
			return
		}
		seen[p] = len(out)
		out = append(out, FileChange{Path: p, Created: created})
	}
	created := responseSaysCreated(in.ToolResponse)

	var args map[string]json.RawMessage
	if json.Unmarshal(in.ToolInput, &args) == nil {
		for _, k := range []string{"file_path", "filePath", "path", "notebook_path", "absolute_path"} {
			if p := lenientString(args[k]); p != "" {
				add(p, created)
				break
			}
		}
		var edits []map[string]json.RawMessage
		if json.Unmarshal(args["edits"], &edits) == nil {
			for _, e := range edits {
				for _, k := range []string{"file_path", "filePath", "path"} {
					if p := lenientString(e[k]); p != "" {
						add(p, false)
						break
					}
				}
			}
		}
		for _, k := range []string{"command", "input", "patch"} {
			for _, f := range patchFiles(lenientString(args[k])) {
				add(f.Path, f.Created)
			}
		}
	} else {
		// A freeform apply_patch call sends the patch itself as a string.
		for _, f := range patchFiles(lenientString(in.ToolInput)) {
			add(f.Path, f.Created)
		}
	}
	if len(out) == 0 {
		// Some clients only name the file in the response (Write's filePath).
		var resp map[string]json.RawMessage
		if json.Unmarshal(in.ToolResponse, &resp) == nil {
			for _, k := range []string{"filePath", "file_path"} {
				if p := lenientString(resp[k]); p != "" {
					add(p, created)
					break
				}
			}
		}
	}
	return out
}

// responseSaysCreated reports a response that says the file is new: a
// Claude Code Write of type create, a Gemini CLI write_file whose
// returnDisplay has isNewFile true.
func responseSaysCreated(resp json.RawMessage) bool {
	ms, ok := objectMembers(resp)
	if !ok {
		return false
	}
	if lenientString(ms.raw("type")) == "create" {
		return true
	}
	display, _ := objectMembers(ms.raw("returnDisplay"))
	return lenientBool(display.raw("isNewFile"))
}

// patchFiles reads the file headers of a Codex apply_patch body:
// "*** Add File: p", "*** Update File: p", "*** Delete File: p" and
// "*** Move to: p". Anything that is not such a patch gives nothing.
func patchFiles(body string) []FileChange {
	if !strings.Contains(body, "*** ") {
		return nil
	}
	var out []FileChange
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		for _, h := range []struct {
			prefix  string
			created bool
		}{{"*** Add File: ", true}, {"*** Update File: ", false}, {"*** Delete File: ", false}, {"*** Move to: ", false}} {
			if p, ok := strings.CutPrefix(line, h.prefix); ok {
				out = append(out, FileChange{Path: strings.TrimSpace(p), Created: h.created})
			}
		}
	}
	return out
}
