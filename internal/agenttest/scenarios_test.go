package agenttest

import (
	"context"
	"testing"
	"time"
)

// The retry-budget session of issue 19: a Go project whose test fails until
// the budget exists.
var retryBudgetFiles = map[string]string{
	"go.mod":    "module example.com/syncworker\n\ngo 1.21\n",
	"worker.go": "// Package worker syncs records.\npackage worker\n\n// Sync syncs once.\nfunc Sync() error { return nil }\n",
	"worker_test.go": "package worker\n\nimport \"testing\"\n\nfunc TestRetryBudget(t *testing.T) {\n" +
		"\tt.Fatal(\"the sync worker has no retry budget\")\n}\n",
}

const (
	retryAsk       = "Add a retry budget to the sync worker"
	retryTask1     = "Add a RetryBudget setting to the worker config"
	retryTask2     = "Enforce the retry budget in worker.go"
	retryLastWords = "Next I will implement the budget in worker.go."
)

// retryBudgetSteps plans two tasks, finishes the first, starts the second,
// runs the failing test and stops.
var retryBudgetSteps = []Step{
	Call("TaskCreate", map[string]any{"subject": retryTask1, "description": "A RetryBudget field (max retries per sync) with a default of 3.", "activeForm": "Adding the RetryBudget setting"}),
	Call("TaskCreate", map[string]any{"subject": retryTask2, "description": "Sync stops retrying once the budget is spent.", "activeForm": "Enforcing the retry budget"}),
	Call("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"}),
	Call("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"}),
	Call("TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"}),
	Call("Bash", map[string]any{"command": "go test ./...", "description": "Run the worker tests"}),
	Say(retryLastWords),
}

func claudeScenarios() []scenario {
	sid := "5f0c6f43-3a8e-4c59-9d55-2b1f1d7f0a11"
	return []scenario{{
		name: "claude-code-short-edit", client: ClaudeCode,
		about: "`claude -p \"Fix the typo in README.md\"`: the model reads README.md, edits it (Edit) and ends its turn with a sentence; the session ends normally (Stop, SessionEnd).",
		script: Script{Conversations: []Conversation{{Match: "Fix the typo", Steps: []Step{
			Call("Read", map[string]any{"file_path": "README.md"}),
			Call("Edit", map[string]any{"file_path": "README.md", "old_string": "# proj", "new_string": "# Project"}),
			Say("Fixed the typo in README.md."),
		}}}},
		run: func(t *testing.T, s *Session) { s.MustRun(ClaudeArgs("Fix the typo in README.md")...) },
	}, {
		name: "claude-code-tasks-failing-test", client: ClaudeCode, files: retryBudgetFiles,
		about:  "Issue 19's session: `claude -p \"" + retryAsk + "\"` plans two tasks with TaskCreate (\"" + retryTask1 + "\", \"" + retryTask2 + "\"), marks task 1 in_progress then completed and task 2 in_progress with TaskUpdate, runs `go test ./...` with Bash, which fails (`--- FAIL: TestRetryBudget`, exit 1: PostToolUseFailure), and ends its turn saying \"" + retryLastWords + "\"",
		script: Script{Conversations: []Conversation{{Match: retryAsk, Steps: retryBudgetSteps}}},
		run:    func(t *testing.T, s *Session) { s.MustRun(ClaudeArgs(retryAsk)...) },
	}, {
		name: "claude-code-subagent", client: ClaudeCode,
		about: "`claude -p \"Delegate: find the README's title\"`: the model starts a general-purpose subagent with the Task tool; the subagent runs `ls` (Bash) and answers; the main agent ends its turn. SubagentStart/SubagentStop carry agent_type general-purpose.",
		script: Script{Conversations: []Conversation{
			{Match: "List the files of the project", Steps: []Step{
				Call("Bash", map[string]any{"command": "ls", "description": "List the files"}),
				Say("The project holds README.md; its title is proj."),
			}},
			{Match: "Delegate", Steps: []Step{
				Call("Task", map[string]any{"description": "Find the README title", "prompt": "List the files of the project and report the README's title.", "subagent_type": "general-purpose"}),
				Say("The subagent reports the README's title: proj."),
			}},
		}},
		run: func(t *testing.T, s *Session) { s.MustRun(ClaudeArgs("Delegate: find the README's title")...) },
	}, {
		name: "claude-code-api-error-529", client: ClaudeCode, env: []string{"CLAUDE_CODE_MAX_RETRIES=0"},
		about: "`claude -p \"Summarise the README\"` with CLAUDE_CODE_MAX_RETRIES=0 while the API answers 529 overloaded_error: the turn fails; StopFailure and SessionEnd start together and the client exits without waiting for them.",
		script: Script{Conversations: []Conversation{{Match: "Summarise the README", Steps: []Step{
			Fail(529, "overloaded_error", "Overloaded"),
		}}}},
		run: func(t *testing.T, s *Session) { _, _ = s.Run(ClaudeArgs("Summarise the README")...) },
	}, {
		name: "claude-code-clean-exit", client: ClaudeCode,
		about:  "`claude -p \"Say hello\"`: one text answer, no tool; the session ends normally (Stop, then SessionEnd with reason other).",
		script: Script{Conversations: []Conversation{{Match: "Say hello", Steps: []Step{Say("Hello! Nothing to change here.")}}}},
		run:    func(t *testing.T, s *Session) { s.MustRun(ClaudeArgs("Say hello")...) },
	}, {
		name: "claude-code-kill-mid-tool", client: ClaudeCode,
		about: "`claude -p \"Run the slow migration\"`: the model runs `sleep 120` with Bash; once PreToolUse has fired the client process gets SIGKILL (kill -9). No PostToolUse, Stop or SessionEnd follows: the trace ends mid-tool.",
		script: Script{Conversations: []Conversation{{Match: "Run the slow migration", Steps: []Step{
			Call("Bash", map[string]any{"command": "sleep 120", "description": "Run the slow migration"}),
			Say("Done."),
		}}}},
		run: func(t *testing.T, s *Session) {
			ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
			defer cancel()
			cmd := s.Command(ctx, ClaudeArgs("Run the slow migration")...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer KillGroup(cmd)
			s.WaitForHook("PreToolUse", 1, time.Minute)
			time.Sleep(time.Second) // the tool is running
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		},
	}, {
		name: "claude-code-resume", client: ClaudeCode,
		about: "Two runs of one session: `claude -p \"Read the README\" --session-id " + sid + "` (Read, answer), then `claude -p \"Now add a line to it\" --resume " + sid + "` (Read, Edit, answer). The second run's SessionStart has source resume and the same session_id.",
		script: Script{Conversations: []Conversation{{Match: "Read the README", Steps: []Step{
			Call("Read", map[string]any{"file_path": "README.md"}),
			Say("The README holds only its title."),
			Call("Edit", map[string]any{"file_path": "README.md", "old_string": "# proj\n", "new_string": "# proj\n\nA sync worker.\n"}),
			Say("Added a line to the README."),
		}}}},
		run: func(t *testing.T, s *Session) {
			s.MustRun(ClaudeArgs("Read the README", "--session-id", sid)...)
			s.MustRun(ClaudeArgs("Now add a line to it", "--resume", sid)...)
		},
	}, {
		name: "claude-code-compact", client: ClaudeCode,
		about: "Two runs of one session: `claude -p \"Read the README\" --session-id " + sid + "` (Read, answer), then `claude -p \"/compact\" --resume " + sid + "`: a manual compaction (PreCompact trigger manual; the mock answers the summary request).",
		script: Script{Conversations: []Conversation{{Match: "Read the README", Steps: []Step{
			Call("Read", map[string]any{"file_path": "README.md"}),
			Say("The README holds only its title."),
		}}}, Default: "Summary: the user asked to read the README; it holds only its title."},
		run: func(t *testing.T, s *Session) {
			s.MustRun(ClaudeArgs("Read the README", "--session-id", sid)...)
			s.MustRun(ClaudeArgs("/compact", "--resume", sid)...)
		},
	}}
}

// tuiScenarios are the sessions only the interactive client shows.
func tuiScenarios() []scenario {
	return []scenario{{
		name: "claude-code-permission-wait-tui", client: ClaudeCode,
		about: "Interactive `claude \"Mark the migration\"` under a pseudo-terminal (script(1)), default permission mode: the model runs `touch MIGRATED` with Bash, which needs permission; the dialog opens and Notification (notification_type permission_prompt) fires. The test presses Enter (Yes): the tool runs (PostToolUse), the model answers (Stop); then it types /exit: SessionEnd with reason prompt_input_exit.",
		script: Script{Conversations: []Conversation{{Match: "Mark the migration", Steps: []Step{
			Call("Bash", map[string]any{"command": "touch MIGRATED", "description": "Mark the migration"}),
			Say("Marked the migration."),
		}}}},
		run: func(t *testing.T, s *Session) {
			tui := s.StartClaudeTUI("Mark the migration")
			s.WaitForHook("Notification", 1, time.Minute)
			time.Sleep(time.Second) // the dialog takes keys once drawn
			tui.Type("\r")
			s.WaitForHook("Stop", 1, time.Minute)
			time.Sleep(time.Second)
			tui.Type("/exit\r")
			s.WaitForHook("SessionEnd", 1, time.Minute)
		},
	}}
}
