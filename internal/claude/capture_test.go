package claude

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

func stepsOf(c *ckpt.Checkpoint) []string {
	var out []string
	for _, s := range c.Steps {
		out = append(out, s.ID+"="+string(s.Status)+":"+s.Title)
	}
	return out
}

func TestTaskToolsBecomeStepsIdempotentAndInAnyOrder(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"Add a retry budget to the sync worker"}`)
	create := func(tu, id, subject string) string {
		return `{"session_id":"s1","cwd":"/w/app","tool_name":"TaskCreate","tool_use_id":"` + tu + `","tool_input":{"subject":"` + subject + `","description":"d","activeForm":"Doing"},"tool_response":{"task":{"id":"` + id + `","subject":"` + subject + `"}}}`
	}
	update := func(tu, id, status, extra string) string {
		return `{"session_id":"s1","cwd":"/w/app","tool_name":"TaskUpdate","tool_use_id":"` + tu + `","tool_input":{"taskId":"` + id + `","status":"` + status + `"` + extra + `},"tool_response":{"success":true}}`
	}
	// Task 2's update arrives before its create (hooks of quick calls
	// overlap); task 1 is created twice (a retried hook).
	for _, p := range []string{
		create("t1", "1", "Write the failing test"),
		create("t1", "1", "Write the failing test"),
		update("u0", "2", "pending", `,"addBlockedBy":["1"]`),
		create("t2", "2", "Implement the budget"),
		update("u1", "1", "in_progress", ""),
		update("u2", "1", "completed", ""),
		update("u1", "1", "in_progress", ""), // late: never reopens
		update("u3", "2", "in_progress", ""),
	} {
		if _, errs := hook(t, h, "PostToolUse", p); errs != "" {
			t.Fatalf("%s: %s", p, errs)
		}
	}
	c := state(t, h, id)
	want := []string{"task-1=done:Write the failing test", "task-2=in_progress:Implement the budget"}
	if got := stepsOf(c); !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	if c.CurrentStep != "Implement the budget" || !slices.Equal(c.Steps[1].DependsOn, []string{"task-1"}) {
		t.Errorf("current %q, task-2 depends on %v", c.CurrentStep, c.Steps[1].DependsOn)
	}
	if c.Progress.Done != 1 || c.Progress.Total != 2 {
		t.Errorf("progress %+v", c.Progress)
	}
	rev := c.Rev
	hook(t, h, "PostToolUse", update("u9", "2", "in_progress", ""))
	if state(t, h, id).Rev != rev {
		t.Error("an update that changes nothing appended")
	}

	// A new client session on the same checkpoint numbers its tasks from 1
	// again: its task 1 is another step. Deleting it skips it.
	h.Getenv = envOf(map[string]string{"CKPT_ID": id})
	hook(t, h, "UserPromptSubmit", `{"session_id":"s2","prompt":"go on"}`)
	hook(t, h, "PostToolUse", strings.ReplaceAll(create("t5", "1", "Document it"), `"s1"`, `"s2"`))
	hook(t, h, "PostToolUse", strings.ReplaceAll(update("u5", "1", "deleted", ""), `"s1"`, `"s2"`))
	c = state(t, h, id)
	want = append(want, "task-1-2=skipped:Document it")
	if got := stepsOf(c); !slices.Equal(got, want) {
		t.Errorf("after session 2: steps %v, want %v", got, want)
	}
}

func TestPlanToolsNeverDuplicateTheAgentsSteps(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	// The agent recorded its own step with `ckpt step`.
	if _, err := h.Store.Append(t.Context(), id, ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{Agent: "me"}, ckpt.StepChange{ID: "impl", Title: "Implement the budget"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	todos := `{"session_id":"s1","cwd":"/w/app","tool_name":"TodoWrite","tool_use_id":"w1","tool_input":{"todos":[` +
		`{"content":"Implement the budget","status":"in_progress","activeForm":"Implementing"},` +
		`{"content":"Run the tests","status":"pending","activeForm":"Running"}]}}`
	hook(t, h, "PostToolUse", todos)
	hook(t, h, "PostToolUse", strings.Replace(todos, `"w1"`, `"w2"`, 1)) // the same list again
	c := state(t, h, id)
	want := []string{"impl=in_progress:Implement the budget", "todo-run-the-tests=pending:Run the tests"}
	if got := stepsOf(c); !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	// Codex's update_plan and Gemini CLI's write_todos name the same tasks.
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"update_plan","tool_input":{"plan":[{"step":"Run the tests","status":"completed"}]}}`)
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"write_todos","tool_input":{"todos":[{"description":"Implement the budget","status":"completed"},{"description":"Ship","status":"cancelled"}]}}`)
	c = state(t, h, id)
	want = []string{"impl=done:Implement the budget", "todo-run-the-tests=done:Run the tests", "todo-ship=skipped:Ship"}
	if got := stepsOf(c); !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
}

func TestFailuresAreErrorsUntilTheCommandSucceeds(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	long := strings.Repeat("ok  \tpkg/other\n", 200)
	fail, _ := json.Marshal(map[string]any{"session_id": "s1", "cwd": "/w/app", "tool_name": "Bash", "tool_use_id": "b1",
		"tool_input": map[string]any{"command": "go test ./...\n# second line", "description": "Run tests"},
		"error":      "Exit code 1\n" + long + "--- FAIL: TestRetryBudget (0.00s)\n    worker_test.go:12: want 3 retries, got 0\nFAIL\nFAIL\tapp/worker\t0.01s"})
	hook(t, h, "PostToolUseFailure", string(fail))
	hook(t, h, "PostToolUseFailure", string(fail)) // retried
	c := state(t, h, id)
	errs := c.ActiveErrors()
	if len(errs) != 1 || errs[0].Type != "command: go test ./..." {
		t.Fatalf("errors %+v", errs)
	}
	m := errs[0].Message
	if !strings.HasPrefix(m, "Exit code 1\n…\n") || !strings.Contains(m, "FAIL: TestRetryBudget") || len(m) > failTailMax+40 || strings.Count(m, "\n") > failTailLines+2 {
		t.Errorf("message (%d bytes):\n%s", len(m), m)
	}
	// Codex reports a Bash exit code in its text response.
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"Bash","tool_use_id":"c1","tool_input":{"command":"make lint"},"tool_response":"Exit code: 2\nWall time: 0.1 seconds\nOutput:\nlint: worker.go:3: unused variable"}`)
	if errs := state(t, h, id).ActiveErrors(); len(errs) != 2 || errs[1].Type != "command: make lint" || !strings.Contains(errs[1].Message, "unused variable") {
		t.Fatalf("errors after codex: %+v", errs)
	}
	// A success of the same command clears its failure only.
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"Bash","tool_use_id":"b2","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok","stderr":"","interrupted":false}}`)
	errs = state(t, h, id).ActiveErrors()
	if len(errs) != 1 || errs[0].Type != "command: make lint" {
		t.Errorf("after the success: %+v", errs)
	}
	// Gemini CLI's shell reports its exit code in llmContent.
	hook(t, h, "PostToolUse", `{"session_id":"s1","cwd":"/w/app","tool_name":"run_shell_command","tool_input":{"command":"make lint"},"tool_response":{"llmContent":"Command: make lint\nOutput: (empty)\nExit Code: 0","returnDisplay":""}}`)
	if errs := state(t, h, id).ActiveErrors(); len(errs) != 0 {
		t.Errorf("after gemini's success: %+v", errs)
	}
}

func TestAskTitleAndRedaction(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"  \n  Deploy with ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx and token ghp_abcdefghijklmnopqrstuvwxyz0123456789\nthen tell me"}`)
	c := state(t, h, id)
	if c.Title != "Deploy with ANTHROPIC_API_KEY=[redacted] and token [redacted]" {
		t.Errorf("title %q", c.Title)
	}
	if raw := string(c.Meta["asks"]); strings.Contains(raw, "sk-ant") || strings.Contains(raw, "ghp_") {
		t.Errorf("a secret was stored: %s", raw)
	}
	for i := range MaxAsks + 3 {
		hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"ask `+string(rune('a'+i))+`"}`)
	}
	c = state(t, h, id)
	asks := readAsks(c)
	if len(asks) != MaxAsks || asks[MaxAsks-1].Text != "ask h" || !strings.HasPrefix(c.Title, "Deploy") {
		t.Errorf("asks %+v title %q", asks, c.Title)
	}
	hook(t, h, "Stop", `{"session_id":"s1","cwd":"/w/app","last_assistant_message":"Next I will implement the budget in worker.go.\nPassword: hunter2hunter2"}`)
	if c := state(t, h, id); c.Context.LastMessage != "Next I will implement the budget in worker.go.\nPassword: [redacted]" {
		t.Errorf("last message %q", c.Context.LastMessage)
	}
}

func TestGeminiNewFileAndPreCompress(t *testing.T) {
	h := newHandler(t)
	h.Client = Gemini
	hook(t, h, "BeforeAgent", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	hook(t, h, "AfterTool", `{"session_id":"s1","cwd":"/w/app","tool_name":"write_file","tool_input":{"file_path":"/w/app/retry.go","content":"package app"},"tool_response":{"llmContent":"Successfully created","returnDisplay":{"fileDiff":"","fileName":"retry.go","isNewFile":true}}}`)
	rev := state(t, h, id).Rev
	for range 3 {
		hook(t, h, "PreCompress", `{"session_id":"s1","cwd":"/w/app","trigger":"auto"}`)
	}
	c := state(t, h, id)
	if !slices.Equal(c.Files.Created, []string{"retry.go"}) || len(c.Files.Modified) != 0 {
		t.Errorf("files %+v", c.Files)
	}
	if c.Rev != rev || strings.Contains(c.Context.Notes, "compacted") {
		t.Errorf("PreCompress wrote: rev %d → %d, notes %q", rev, c.Rev, c.Context.Notes)
	}
}

func FuzzPlanToolItems(f *testing.F) {
	f.Add("TaskCreate", `{"subject":"a","description":"b"}`, `{"task":{"id":"1","subject":"a"}}`)
	f.Add("TaskUpdate", `{"taskId":"1","status":"completed","addBlockedBy":["2",3]}`, `{}`)
	f.Add("TodoWrite", `{"todos":[{"content":"x","status":"in_progress"}]}`, ``)
	f.Add("update_plan", `{"plan":[{"step":"x","status":"pending"}]}`, `"Plan updated"`)
	f.Add("Bash", `{"command":["bash","-lc","go test"]}`, `"Exit code: 1\nboom"`)
	f.Fuzz(func(t *testing.T, tool, input, resp string) {
		in := Input{ToolName: tool, ToolInput: json.RawMessage(input), ToolResponse: json.RawMessage(resp), SessionID: "s"}
		items, _ := planToolItems(in)
		cp := &ckpt.Checkpoint{}
		changes, _ := planSteps(cp, "s", items)
		for _, ch := range changes {
			if ch.ID == "" || ckpt.ValidateID("x/"+ch.ID) != nil {
				t.Fatalf("step ID %q", ch.ID)
			}
		}
		if f := in.failure(true); f == nil || len(f.Message) > failTailMax+200 {
			t.Fatalf("failure %+v", f)
		}
		in.failure(false)
	})
}
