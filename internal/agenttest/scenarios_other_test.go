package agenttest

import "testing"

const codexPatch = "*** Begin Patch\n*** Add File: NOTES.md\n+# Notes\n+The sync worker retries three times.\n*** End Patch\n"

func codexScenarios() []scenario {
	return []scenario{{
		name: "codex-exec-shell-patch", client: Codex,
		about: "`codex exec \"Write the notes file\"`: the model runs `ls` (exec_command, reaching hooks as Bash with a string tool_response), adds NOTES.md with apply_patch (a freeform custom tool call) and answers. Codex has no SessionEnd: the trace ends with Stop.",
		script: Script{Conversations: []Conversation{{Match: "Write the notes file", Steps: []Step{
			Call("exec_command", map[string]any{"cmd": "ls"}),
			{Tool: &ToolCall{Name: "apply_patch", Raw: codexPatch}},
			Say("Wrote NOTES.md."),
		}}}},
		run: func(t *testing.T, s *Session) { s.MustRun(CodexArgs("Write the notes file", false)...) },
	}, {
		name: "codex-resume", client: Codex,
		about: "Two turns of one Codex session. `codex exec \"Write the notes file\"` (exec_command `ls`, apply_patch adding NOTES.md, answer), then `codex exec resume --last \"Check the notes and the changelog\"`: SessionStart source resume; the model runs `cat NOTES.md` (succeeds) and `cat CHANGELOG.md` (fails, exit 1) and answers.",
		script: Script{Conversations: []Conversation{{Match: "Write the notes file", Steps: []Step{
			Call("exec_command", map[string]any{"cmd": "ls"}),
			{Tool: &ToolCall{Name: "apply_patch", Raw: codexPatch}},
			Say("Wrote NOTES.md."),
			Call("exec_command", map[string]any{"cmd": "cat NOTES.md"}),
			Call("exec_command", map[string]any{"cmd": "cat CHANGELOG.md"}),
			Say("NOTES.md says the worker retries three times; there is no CHANGELOG.md yet."),
		}}}},
		run: func(t *testing.T, s *Session) {
			s.MustRun(CodexArgs("Write the notes file", false)...)
			s.MustRun(CodexArgs("Check the notes and the changelog", true)...)
		},
	}}
}

func geminiScenarios() []scenario {
	return []scenario{{
		name: "gemini-todos", client: Gemini,
		about: "`gemini --yolo -p \"Add a retry budget to the sync worker\" --model gemini-2.5-pro` (Gemini CLI 0.61 offers write_todos to Gemini 2 models only, not to its default Gemini 3): the model plans two todos with write_todos (the first in_progress), then marks the first completed and the second in_progress, and answers.",
		script: Script{Conversations: []Conversation{{Match: "Add a retry budget", Steps: []Step{
			Call("write_todos", map[string]any{"todos": []any{
				map[string]any{"description": retryTask1, "status": "in_progress"},
				map[string]any{"description": retryTask2, "status": "pending"}}}),
			Call("write_todos", map[string]any{"todos": []any{
				map[string]any{"description": retryTask1, "status": "completed"},
				map[string]any{"description": retryTask2, "status": "in_progress"}}}),
			Say(retryLastWords),
		}}}},
		run: func(t *testing.T, s *Session) { s.MustRun(GeminiArgs(retryAsk, "--model", "gemini-2.5-pro")...) },
	}, {
		name: "gemini-write-file", client: Gemini,
		about: "`gemini --yolo -p \"Create the notes file\"`: the model writes a new file NOTES.md with write_file (AfterTool tool_response.returnDisplay.isNewFile true) and answers. PreCompress fires before every model request, compressing nothing.",
		script: Script{Conversations: []Conversation{{Match: "Create the notes file", Steps: []Step{
			Call("write_file", map[string]any{"file_path": "NOTES.md", "content": "# Notes\nThe sync worker retries three times.\n"}),
			Say("Created NOTES.md."),
		}}}},
		run: func(t *testing.T, s *Session) { s.MustRun(GeminiArgs("Create the notes file")...) },
	}, {
		name: "gemini-shell", client: Gemini,
		about: "`gemini --yolo -p \"Run the tests\"`: the model runs `sh test.sh` with run_shell_command; it prints `--- FAIL: TestRetryBudget` and exits 1; the model answers. PreCompress fires before every model request, compressing nothing.",
		files: map[string]string{"test.sh": "echo '--- FAIL: TestRetryBudget (0.00s)'\nexit 1\n"},
		script: Script{Conversations: []Conversation{{Match: "Run the tests", Steps: []Step{
			Call("run_shell_command", map[string]any{"command": "sh test.sh", "description": "Run the tests"}),
			Say("TestRetryBudget fails. Next I will implement the budget in worker.go."),
		}}}},
		run: func(t *testing.T, s *Session) { s.MustRun(GeminiArgs("Run the tests")...) },
	}}
}
