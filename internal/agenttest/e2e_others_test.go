package agenttest

import (
	"strings"
	"testing"
)

// onlyCheckpoint is the one checkpoint a session's hooks created.
func onlyCheckpoint(t *testing.T, s *Session) string {
	t.Helper()
	ids := s.Checkpoints()
	if len(ids) != 1 {
		t.Fatalf("checkpoints %v, want exactly one (the session's)", ids)
	}
	return ids[0]
}

// TestCodexSessionIsRecorded: `codex exec` with a shell command and
// apply_patch gets a checkpoint of its own, busy while the command runs,
// with the file the patch added and the model's last words; a resumed turn
// (`codex exec resume --last`) writes to the same checkpoint.
func TestCodexSessionIsRecorded(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Write the notes file", Steps: []Step{
		Call("exec_command", map[string]any{"cmd": gateCommand}),
		{Tool: &ToolCall{Name: "apply_patch", Raw: codexPatch}},
		Say("Wrote NOTES.md."),
		Call("exec_command", map[string]any{"cmd": "cat NOTES.md"}),
		Say("NOTES.md says the worker retries three times."),
	}}}})
	s := NewSession(t, Codex, srv, Options{})
	run := s.Start(CodexArgs("Write the notes file", false)...)
	id := pollCheckpoint(t, s)
	if !strings.HasPrefix(id, "proj/session-") {
		t.Errorf("checkpoint %q, want proj/session-<thread id>", id)
	}
	v := waitPresence(t, s, id, "busy")
	if got := field(v, "agent.id"); got != "codex" {
		t.Errorf("agent %q, want codex", got)
	}
	openGate(t, s)
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	v = waitFor(t, s, id, "with its last words", func(v map[string]any) bool {
		return field(v, "context.last_message") == "Wrote NOTES.md."
	})
	if !hasFile(v, "created", "NOTES.md") {
		t.Errorf("files %s: want NOTES.md created", field(v, "files"))
	}
	s.MustRun(CodexArgs("Check the notes", true)...)
	waitFor(t, s, id, "with the resumed turn's last words", func(v map[string]any) bool {
		return field(v, "context.last_message") == "NOTES.md says the worker retries three times."
	})
	if got := onlyCheckpoint(t, s); got != id {
		t.Errorf("the resumed turn wrote to %s, want %s", got, id)
	}
}

// TestGeminiSessionIsRecorded: Gemini CLI planning with write_todos,
// writing a new file and running a shell command gets a checkpoint titled
// with its ask, its todos as steps (one done, the current one in
// progress), busy while the command runs, the file as created, the
// model's last words, no compaction note for PreCompress (which Gemini
// fires before every request), and ended when the CLI exits. Gemini CLI
// 0.61 offers write_todos to Gemini 2 models only, hence --model.
func TestGeminiSessionIsRecorded(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: retryAsk, Steps: []Step{
		Call("write_todos", map[string]any{"todos": []any{
			map[string]any{"description": retryTask1, "status": "in_progress"},
			map[string]any{"description": retryTask2, "status": "pending"}}}),
		Call("write_file", map[string]any{"file_path": "NOTES.md", "content": "# Notes\n"}),
		Call("write_todos", map[string]any{"todos": []any{
			map[string]any{"description": retryTask1, "status": "completed"},
			map[string]any{"description": retryTask2, "status": "in_progress"}}}),
		Call("run_shell_command", map[string]any{"command": gateCommand, "description": "Run the migration"}),
		Say(retryLastWords),
	}}}})
	s := NewSession(t, Gemini, srv, Options{})
	run := s.Start(GeminiArgs(retryAsk, "--model", "gemini-2.5-pro")...)
	id := pollCheckpoint(t, s)
	v := waitPresence(t, s, id, "busy")
	if got := field(v, "agent.id"); got != "gemini-cli" {
		t.Errorf("agent %q, want gemini-cli", got)
	}
	openGate(t, s)
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	v = waitPresence(t, s, id, "ended")
	if got := field(v, "title"); got != retryAsk {
		t.Errorf("title %q, want the ask %q", got, retryAsk)
	}
	if got := field(v, "context.last_message"); got != retryLastWords {
		t.Errorf("last message %q, want %q", got, retryLastWords)
	}
	if got := field(v, "progress"); !strings.Contains(got, `"done":1`) || !strings.Contains(got, `"total":2`) {
		t.Errorf("progress %s, want 1 of 2 (the todos)", got)
	}
	if got := field(v, "current_step"); got != retryTask2 {
		t.Errorf("current step %q, want the second todo", got)
	}
	if !hasFile(v, "created", "NOTES.md") {
		t.Errorf("files %s: want NOTES.md created (write_file's isNewFile)", field(v, "files"))
	}
	if notes := field(v, "context.notes"); strings.Contains(notes, "ompact") {
		t.Errorf("notes %q: Gemini's PreCompress compressed nothing", notes)
	}
}
