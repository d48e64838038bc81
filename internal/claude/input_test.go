package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// payloads are hook inputs as the clients document them (Claude Code's hooks
// reference, Codex's generated input schemas, Gemini CLI's hooks reference),
// and the older or other shapes ckpt must still read.
var payloads = []struct {
	name string
	json string
	want Input
}{
	{
		name: "claude SessionStart",
		json: `{"session_id":"abc123","transcript_path":"/home/u/.claude/projects/p/abc123.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"SessionStart","source":"startup","model":"claude-sonnet-4-6"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/home/u/.claude/projects/p/abc123.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "SessionStart", Source: "startup", Model: "claude-sonnet-4-6"},
	},
	{
		name: "claude SessionStart after compaction",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","hook_event_name":"SessionStart","source":"compact","agent_type":"reviewer"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", HookEventName: "SessionStart", Source: "compact", AgentType: "reviewer"},
	},
	{
		name: "claude UserPromptSubmit",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"Write a function to calculate the factorial of a number"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "UserPromptSubmit", Prompt: "Write a function to calculate the factorial of a number"},
	},
	{
		name: "claude PostToolUse Write",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Write","tool_input":{"file_path":"/home/u/proj/file.txt","content":"file content"},"tool_response":{"filePath":"/home/u/proj/file.txt","success":true},"tool_use_id":"toolu_01ABC123"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "PostToolUse", ToolName: "Write",
			ToolInput:    json.RawMessage(`{"file_path":"/home/u/proj/file.txt","content":"file content"}`),
			ToolResponse: json.RawMessage(`{"filePath":"/home/u/proj/file.txt","success":true}`), ToolUseID: "toolu_01ABC123"},
	},
	{
		name: "claude PostToolUse MultiEdit",
		json: `{"session_id":"abc123","cwd":"/home/u/proj","hook_event_name":"PostToolUse","tool_name":"MultiEdit","tool_input":{"file_path":"src/a.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]},"tool_response":{"filePath":"src/a.go"}}`,
		want: Input{SessionID: "abc123", CWD: "/home/u/proj", HookEventName: "PostToolUse", ToolName: "MultiEdit",
			ToolInput:    json.RawMessage(`{"file_path":"src/a.go","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]}`),
			ToolResponse: json.RawMessage(`{"filePath":"src/a.go"}`)},
	},
	{
		name: "claude SubagentStop",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"SubagentStop","stop_hook_active":false,"agent_id":"def456","agent_type":"Explore","agent_transcript_path":"/home/u/.claude/projects/p/abc123/subagents/agent-def456.jsonl","last_assistant_message":"Analysis complete. Found 3 potential issues."}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "SubagentStop", AgentID: "def456", AgentType: "Explore",
			AgentTranscriptPath: "/home/u/.claude/projects/p/abc123/subagents/agent-def456.jsonl", LastAssistantMessage: "Analysis complete. Found 3 potential issues."},
	},
	{
		name: "claude Stop",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"I've completed the refactoring. TASK_COMPLETE"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "Stop", StopHookActive: true, LastAssistantMessage: "I've completed the refactoring. TASK_COMPLETE"},
	},
	{
		name: "claude PreCompact",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"PreCompact","trigger":"manual","custom_instructions":"keep the API decisions"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "PreCompact", Trigger: "manual", CustomInstructions: "keep the API decisions"},
	},
	{
		name: "claude SessionEnd",
		json: `{"session_id":"abc123","transcript_path":"/t.jsonl","cwd":"/home/u/proj","permission_mode":"default","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`,
		want: Input{SessionID: "abc123", TranscriptPath: "/t.jsonl", CWD: "/home/u/proj", PermissionMode: "default", HookEventName: "SessionEnd", Reason: "prompt_input_exit"},
	},
	// Older Claude Code shapes.
	{
		name: "older Stop: no cwd, no last_assistant_message",
		json: `{"session_id":"abc123","transcript_path":"~/.claude/projects/p/00893aaf.jsonl","hook_event_name":"Stop","stop_hook_active":true}`,
		want: Input{SessionID: "abc123", TranscriptPath: "~/.claude/projects/p/00893aaf.jsonl", HookEventName: "Stop", StopHookActive: true},
	},
	{
		name: "older PostToolUse: tool_output",
		json: `{"session_id":"abc123","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/p/x.go","old_string":"a","new_string":"b"},"tool_output":"The file /p/x.go has been updated."}`,
		want: Input{SessionID: "abc123", HookEventName: "PostToolUse", ToolName: "Edit",
			ToolInput: json.RawMessage(`{"file_path":"/p/x.go","old_string":"a","new_string":"b"}`), ToolResponse: json.RawMessage(`"The file /p/x.go has been updated."`)},
	},
	{
		name: "older SubagentStop: subagent_type, stop_hook_active as a string",
		json: `{"session_id":"abc123","hook_event_name":"SubagentStop","stop_hook_active":"true","subagent_type":"general-purpose"}`,
		want: Input{SessionID: "abc123", HookEventName: "SubagentStop", StopHookActive: true, AgentType: "general-purpose"},
	},
	{
		name: "camelCase client, tool arguments as a JSON string",
		json: `{"hookEventName":"PostToolUse","sessionId":"s-9","cwd":"/w","toolName":"Write","toolArgs":"{\"filePath\":\"/w/a.md\"}","stopHookActive":false}`,
		want: Input{SessionID: "s-9", CWD: "/w", HookEventName: "PostToolUse", ToolName: "Write", ToolInput: json.RawMessage(`{"filePath":"/w/a.md"}`)},
	},
	// Codex.
	{
		name: "codex PostToolUse apply_patch",
		json: `{"session_id":"019a","transcript_path":null,"cwd":"/repo","hook_event_name":"PostToolUse","model":"gpt-5-codex","permission_mode":"default","turn_id":"t1","tool_name":"apply_patch","tool_use_id":"call_1","tool_input":{"command":"*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/main.go\n@@\n-a\n+b\n*** End Patch\n"},"tool_response":"Success. Updated the following files:\nA docs/new.md\nM src/main.go\n"}`,
		want: Input{SessionID: "019a", CWD: "/repo", HookEventName: "PostToolUse", Model: "gpt-5-codex", PermissionMode: "default", TurnID: "t1", ToolName: "apply_patch", ToolUseID: "call_1",
			ToolInput:    json.RawMessage(`{"command":"*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/main.go\n@@\n-a\n+b\n*** End Patch\n"}`),
			ToolResponse: json.RawMessage(`"Success. Updated the following files:\nA docs/new.md\nM src/main.go\n"`)},
	},
	{
		name: "codex Stop",
		json: `{"session_id":"019a","transcript_path":"/c/rollout.jsonl","cwd":"/repo","hook_event_name":"Stop","model":"gpt-5-codex","permission_mode":"default","turn_id":"t2","stop_hook_active":false,"last_assistant_message":null}`,
		want: Input{SessionID: "019a", TranscriptPath: "/c/rollout.jsonl", CWD: "/repo", HookEventName: "Stop", Model: "gpt-5-codex", PermissionMode: "default", TurnID: "t2"},
	},
	// Gemini CLI.
	{
		name: "gemini AfterAgent",
		json: `{"session_id":"g1","transcript_path":"/g/t.json","cwd":"/repo","hook_event_name":"AfterAgent","timestamp":"2025-12-01T10:30:00Z","prompt":"fix it","prompt_response":"Fixed.","stop_hook_active":false}`,
		want: Input{SessionID: "g1", TranscriptPath: "/g/t.json", CWD: "/repo", HookEventName: "AfterAgent", Prompt: "fix it", LastAssistantMessage: "Fixed."},
	},
	{
		name: "gemini AfterTool write_file",
		json: `{"session_id":"g1","cwd":"/repo","hook_event_name":"AfterTool","tool_name":"write_file","tool_input":{"file_path":"/repo/plan.md","content":"..."},"tool_response":{"llmContent":"ok","returnDisplay":"ok"}}`,
		want: Input{SessionID: "g1", CWD: "/repo", HookEventName: "AfterTool", ToolName: "write_file",
			ToolInput: json.RawMessage(`{"file_path":"/repo/plan.md","content":"..."}`), ToolResponse: json.RawMessage(`{"llmContent":"ok","returnDisplay":"ok"}`)},
	},
	{
		name: "early gemini SessionStart and SessionEnd: trigger",
		json: `{"session_id":"g1","hook_event_name":"SessionStart","trigger":"resume"}`,
		want: Input{SessionID: "g1", HookEventName: "SessionStart", Source: "resume", Trigger: "resume"},
	},
	{
		name: "early gemini SessionEnd",
		json: `{"session_id":"g1","hook_event_name":"SessionEnd","trigger":"exit"}`,
		want: Input{SessionID: "g1", HookEventName: "SessionEnd", Reason: "exit", Trigger: "exit"},
	},
	// Leniency.
	{
		name: "wrong types and unknown fields",
		json: `{"session_id":12345,"cwd":{"x":1},"hook_event_name":"Stop","stop_hook_active":1,"unknown":[1,2,3],"last_assistant_message":true}`,
		want: Input{SessionID: "12345", HookEventName: "Stop", StopHookActive: true, LastAssistantMessage: "true"},
	},
	{
		name: "empty object",
		json: `{}`,
		want: Input{},
	},
	{
		name: "empty body",
		json: " \n\t",
		want: Input{},
	},
}

func TestParseInputDocumentedAndOlderShapes(t *testing.T) {
	for _, p := range payloads {
		t.Run(p.name, func(t *testing.T) {
			got, err := ParseInput(strings.NewReader(p.json))
			if err != nil {
				t.Fatalf("ParseInput: %v", err)
			}
			if d := cmp.Diff(p.want, got); d != "" {
				t.Errorf("Input (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseInputRefusesWhatIsNotAnObject(t *testing.T) {
	for _, body := range []string{`[1,2]`, `"text"`, `null`, `{"session_id":`, `{"a":1} {"b":2}`, `not json`, `42`} {
		if _, err := ParseInput(strings.NewReader(body)); err == nil {
			t.Errorf("ParseInput(%q) succeeded, want an error", body)
		}
	}
}

func TestParseInputRefusesOversizedPayload(t *testing.T) {
	big := bytes.Repeat([]byte(" "), MaxInputBytes+1)
	_, err := ParseInput(bytes.NewReader(big))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("ParseInput of %d bytes: err = %v, want a size error", len(big), err)
	}
}

func TestFiles(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		want []FileChange
	}{
		{"Edit", Input{ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"/p/a.go","old_string":"x","new_string":"y"}`)}, []FileChange{{Path: "/p/a.go"}}},
		{"Write of a new file", Input{ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":"/p/n.go","content":""}`), ToolResponse: json.RawMessage(`{"type":"create","filePath":"/p/n.go"}`)}, []FileChange{{Path: "/p/n.go", Created: true}}},
		{"Write over a file", Input{ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":"/p/n.go"}`), ToolResponse: json.RawMessage(`{"type":"update"}`)}, []FileChange{{Path: "/p/n.go"}}},
		{"MultiEdit", Input{ToolName: "MultiEdit", ToolInput: json.RawMessage(`{"file_path":"src/a.go","edits":[{"old_string":"a","new_string":"b"}]}`)}, []FileChange{{Path: "src/a.go"}}},
		{"NotebookEdit", Input{ToolName: "NotebookEdit", ToolInput: json.RawMessage(`{"notebook_path":"/p/n.ipynb","new_source":"x"}`)}, []FileChange{{Path: "/p/n.ipynb"}}},
		{"edits naming files", Input{ToolName: "edit", ToolInput: json.RawMessage(`{"edits":[{"path":"a"},{"file_path":"b"},{"path":"a"}]}`)}, []FileChange{{Path: "a"}, {Path: "b"}}},
		{"codex apply_patch", Input{ToolName: "apply_patch", ToolInput: json.RawMessage(`{"command":"*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** Update File: src/main.go\n*** Move to: src/app.go\n@@\n-a\n+b\n*** Delete File: old.txt\r\n*** End Patch"}`)},
			[]FileChange{{Path: "docs/new.md", Created: true}, {Path: "src/main.go"}, {Path: "src/app.go"}, {Path: "old.txt"}}},
		{"codex freeform apply_patch", Input{ToolName: "apply_patch", ToolInput: json.RawMessage(`"*** Begin Patch\n*** Update File: a.txt\n*** End Patch"`)}, []FileChange{{Path: "a.txt"}}},
		{"gemini replace", Input{ToolName: "replace", ToolInput: json.RawMessage(`{"file_path":"/r/plan.md","old_string":"- [ ]","new_string":"- [x]"}`)}, []FileChange{{Path: "/r/plan.md"}}},
		{"file named only in the response", Input{ToolName: "Write", ToolResponse: json.RawMessage(`{"filePath":"/p/r.go"}`)}, []FileChange{{Path: "/p/r.go"}}},
		{"no tool name", Input{ToolInput: json.RawMessage(`{"file_path":"x.go"}`)}, []FileChange{{Path: "x.go"}}},
		{"Read is not an edit", Input{ToolName: "Read", ToolInput: json.RawMessage(`{"file_path":"/p/a.go"}`)}, nil},
		{"Bash is not an edit", Input{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"*** Update File: x"}`)}, nil},
		{"garbage arguments", Input{ToolName: "Edit", ToolInput: json.RawMessage(`[1,2`)}, nil},
		{"NUL in a path", Input{ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"a\u0000b"}`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.in.Files()); d != "" {
				t.Errorf("Files (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseEvent(t *testing.T) {
	for name, want := range map[string]Event{
		"SessionStart": EventSessionStart, "session-start": EventSessionStart, "session_start": EventSessionStart, "SESSIONSTART": EventSessionStart,
		"UserPromptSubmit": EventUserPromptSubmit, "BeforeAgent": EventUserPromptSubmit,
		"PostToolUse": EventPostToolUse, "AfterTool": EventPostToolUse,
		"SubagentStop": EventSubagentStop, "Stop": EventStop, "AfterAgent": EventStop, "stop": EventStop,
		"PreCompact": EventPreCompact, "PreCompress": EventPreCompact, "SessionEnd": EventSessionEnd, " session end ": EventSessionEnd,
		"PreToolUse": EventPreToolUse, "BeforeTool": EventPreToolUse, "PostToolUseFailure": EventPostToolUseFailure,
		"SubagentStart": EventSubagentStart, "Notification": EventNotification, "PermissionRequest": EventPermissionRequest,
		"StopFailure": EventStopFailure,
	} {
		got, err := ParseEvent(name)
		if err != nil || got != want {
			t.Errorf("ParseEvent(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"", "TeammateIdle", "PostCompact", "start"} {
		if _, err := ParseEvent(name); err == nil || !strings.Contains(err.Error(), "SessionStart") {
			t.Errorf("ParseEvent(%q): err = %v, want one naming the handled events", name, err)
		}
	}
}

func FuzzParseInput(f *testing.F) {
	for _, p := range payloads {
		f.Add([]byte(p.json))
	}
	for _, s := range []string{`[`, `{"tool_input":"{\"file_path\":1}"}`, `{"tool_input":"*** Add File: "}`, "{\"session_id\":\"\xff\xfe\"}", `{"stop_hook_active":"yes"}`, `{"a":{"b":{"c":[[[[[]]]]]}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := ParseInput(bytes.NewReader(body))
		if err != nil {
			return
		}
		for _, fc := range in.Files() {
			if fc.Path == "" || strings.ContainsRune(fc.Path, 0) {
				t.Fatalf("Files gave %q", fc.Path)
			}
		}
		// The canonical form reads back as the same Input.
		canon, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("marshalling %+v: %v", in, err)
		}
		again, err := ParseInput(bytes.NewReader(canon))
		if err != nil {
			t.Fatalf("re-parsing %s: %v", canon, err)
		}
		// Raw JSON compares by value: re-marshalling may escape differently.
		compact := cmp.Transformer("decode", func(r json.RawMessage) any {
			var v any
			if json.Unmarshal(r, &v) != nil {
				return string(r)
			}
			return v
		})
		if d := cmp.Diff(in, again, compact); d != "" {
			t.Fatalf("round trip of %q changed the input (-first +second):\n%s", body, d)
		}
	})
}
