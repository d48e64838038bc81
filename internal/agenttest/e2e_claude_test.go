package agenttest

import (
	"strings"
	"testing"
)

// TestClaudeCodeSessionIsRecorded: a headless Claude Code session that
// reads, runs a shell command and edits gets a checkpoint named after its
// session, busy while the command runs, with the file it edited and its
// last words, and ended once the client exits.
func TestClaudeCodeSessionIsRecorded(t *testing.T) {
	t.Parallel()
	const sid = "0b7e3d1a-6c2f-4e8b-9a1d-5f4c3b2a1e0d"
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Fix the typo", Steps: []Step{
		Call("Read", map[string]any{"file_path": "README.md"}),
		Call("Bash", map[string]any{"command": gateCommand, "description": "Run the migration"}),
		Call("Edit", map[string]any{"file_path": "README.md", "old_string": "# proj", "new_string": "# Project"}),
		Say("Fixed the typo in README.md."),
	}}}})
	s := NewSession(t, ClaudeCode, srv, Options{})
	run := s.Start(ClaudeArgs("Fix the typo in README.md", "--session-id", sid)...)
	id := "proj/session-" + sid
	v := waitPresence(t, s, id, "busy")
	if got := field(v, "agent.id"); got != "claude-code" {
		t.Errorf("agent %q, want claude-code", got)
	}
	openGate(t, s)
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	v = waitPresence(t, s, id, "ended")
	if !hasFile(v, "modified", "README.md") {
		t.Errorf("files %s: want README.md modified", field(v, "files"))
	}
	if got := field(v, "context.last_message"); got != "Fixed the typo in README.md." {
		t.Errorf("last message %q", got)
	}
	if got := field(v, "title"); got != "Fix the typo in README.md" {
		t.Errorf("title %q, want the session's first prompt", got)
	}
	if got := field(v, "session.id"); got != sid {
		t.Errorf("session %q, want %s", got, sid)
	}
	// SessionStart carried ckpt's context into the model's first request.
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(reqs[0].AllText(), "ckpt") {
		t.Errorf("the first request does not mention ckpt: hooks' additionalContext did not reach the model")
	}
}

// TestClaudeCodeKilledMidToolIsDead: kill -9 while a tool runs leaves no
// SessionEnd; the checkpoint, busy during the tool, reads dead once the
// client process is gone.
func TestClaudeCodeKilledMidToolIsDead(t *testing.T) {
	t.Parallel()
	const sid = "3c1d2e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Run the slow migration", Steps: []Step{
		Call("Bash", map[string]any{"command": gateCommand, "description": "Run the slow migration"}),
		Say("Done."),
	}}}})
	s := NewSession(t, ClaudeCode, srv, Options{})
	run := s.Start(ClaudeArgs("Run the slow migration", "--session-id", sid)...)
	id := "proj/session-" + sid
	waitPresence(t, s, id, "busy")
	run.Kill()
	_, _ = run.Wait()
	v := waitPresence(t, s, id, "dead")
	if got := field(v, "presence.why"); !strings.Contains(got, "gone") {
		t.Errorf("dead because %q, want the process gone", got)
	}
}

// TestClaudeCodePermissionDialogIsWaiting: the interactive client's
// permission dialog (under a pseudo-terminal) makes the checkpoint
// waiting for a permission; answering it and exiting ends the session.
func TestClaudeCodePermissionDialogIsWaiting(t *testing.T) {
	t.Parallel()
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Mark the migration", Steps: []Step{
		Call("Bash", map[string]any{"command": "touch MIGRATED", "description": "Mark the migration"}),
		Say("Marked the migration."),
	}}}})
	s := NewSession(t, ClaudeCode, srv, Options{Record: true})
	tui := s.StartClaudeTUI("Mark the migration")
	s.WaitForHook("Notification", 1, hookWait)
	var sid string
	for _, e := range s.Recording() {
		if e.Event == "Notification" {
			sid = field(decode(t, e.Payload), "session_id")
		}
	}
	id := "proj/session-" + sid
	v := waitPresence(t, s, id, "waiting")
	if got := field(v, "presence.why"); !strings.Contains(got, "permission") {
		t.Errorf("waiting because %q, want the permission prompt", got)
	}
	// The hook can fire before the dialog takes keys: Enter typed earlier
	// is lost, and the session waits for ever.
	tui.WaitForText(0, "Do you want to proceed?", hookWait)
	tui.Type("\r") // Yes
	s.WaitForHook("Stop", 1, hookWait)
	tui.Type("/exit\r")
	waitPresence(t, s, id, "ended")
}
