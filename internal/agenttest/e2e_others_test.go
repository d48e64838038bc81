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
		return field(v, "meta.last_message.text") == "Wrote NOTES.md."
	})
	if !hasFile(v, "created", "NOTES.md") {
		t.Errorf("files %s: want NOTES.md created", field(v, "files"))
	}
	s.MustRun(CodexArgs("Check the notes", true)...)
	waitFor(t, s, id, "with the resumed turn's last words", func(v map[string]any) bool {
		return field(v, "meta.last_message.text") == "NOTES.md says the worker retries three times."
	})
	if got := onlyCheckpoint(t, s); got != id {
		t.Errorf("the resumed turn wrote to %s, want %s", got, id)
	}
}

// TestGeminiSessionIsRecorded: Gemini CLI writing a new file and running
// a shell command gets a checkpoint, busy while the command runs, with the
// file and the model's last words, ended when the CLI exits.
func TestGeminiSessionIsRecorded(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Create the notes file", Steps: []Step{
		Call("write_file", map[string]any{"file_path": "NOTES.md", "content": "# Notes\n"}),
		Call("run_shell_command", map[string]any{"command": gateCommand, "description": "Run the migration"}),
		Say("Created NOTES.md."),
	}}}})
	s := NewSession(t, Gemini, srv, Options{})
	run := s.Start(GeminiArgs("Create the notes file")...)
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
	if got := field(v, "meta.last_message.text"); got != "Created NOTES.md." {
		t.Errorf("last message %q", got)
	}
	if !hasFile(v, "created", "NOTES.md") && !hasFile(v, "modified", "NOTES.md") {
		t.Errorf("files %s: want NOTES.md", field(v, "files"))
	}
}
