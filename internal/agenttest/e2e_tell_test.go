package agenttest

import (
	"strings"
	"testing"
)

// TestClaudeCodeToldMessageReachesTheModel is issue 25's proof with the
// real Claude Code client: a message told (ckpt tell) to a running session
// is delivered at its Stop hook, which keeps the session going with the
// message; the model sees it in a later request, before the session stops.
func TestClaudeCodeToldMessageReachesTheModel(t *testing.T) {
	t.Parallel()
	const (
		sid     = "6d4c2b1a-0f9e-4d8c-b7a6-5e4d3c2b1a09"
		message = "Also add the retry budget to the CHANGELOG."
		final   = "Added the CHANGELOG entry too."
	)
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Run the migration", Steps: []Step{
		Call("Bash", map[string]any{"command": gateCommand, "description": "Run the migration"}),
		Say("The migration ran."),
		Say(final),
	}}}})
	s := NewSession(t, ClaudeCode, srv, Options{})
	run := s.Start(ClaudeArgs("Run the migration", "--session-id", sid)...)
	id := "proj/session-" + sid
	waitPresence(t, s, id, "busy")
	s.MustCkpt("--agent", "lead", "tell", id, message)
	openGate(t, s)
	out, err := run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	var told *Request
	reqs := srv.Requests()
	for i, r := range reqs {
		if r.Script && r.Contains(message) {
			told = &reqs[i]
			break
		}
	}
	if told == nil {
		t.Fatalf("no model request carried the told message; stdout:\n%s", tail(out))
	}
	// Delivered at Stop: the model had answered ("The migration ran.")
	// and the session went on with the message instead of stopping.
	if told.Turns != 2 || !told.Contains("The migration ran.") {
		t.Errorf("the message reached the model at turn %d, want 2 (after the turn's answer, at Stop)", told.Turns)
	}
	if !told.Contains("lead") {
		t.Errorf("the delivered message does not name its sender (lead)")
	}
	if !strings.Contains(out, `"result":"`+final+`"`) {
		t.Errorf("the session did not end with the answer to the message; stdout:\n%s", tail(out))
	}
	v := waitPresence(t, s, id, "ended")
	if pending := field(v, "messages"); pending != "" {
		t.Errorf("messages still pending after delivery: %s", pending)
	}
	if log := s.MustCkpt("log", id); !strings.Contains(log, "delivered") || !strings.Contains(log, "Stop") {
		t.Errorf("the history does not record the delivery at Stop:\n%s", log)
	}
}

// TestCodexAndGeminiToldMessageReachesTheModel: the same with Codex CLI
// (its Stop hook's decision: block) and Gemini CLI (AfterAgent's block,
// which Gemini sends back to the model as a new prompt).
func TestCodexAndGeminiToldMessageReachesTheModel(t *testing.T) {
	t.Parallel()
	const message = "Also add the retry budget to the CHANGELOG."
	for _, c := range []struct {
		client Client
		call   Step
		args   []string
	}{
		{Codex, Call("exec_command", map[string]any{"cmd": gateCommand}), CodexArgs("Run the migration", false)},
		{Gemini, Call("run_shell_command", map[string]any{"command": gateCommand, "description": "Run the migration"}), GeminiArgs("Run the migration")},
	} {
		t.Run(c.client.Name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Run the migration", Steps: []Step{
				c.call, Say("The migration ran."), Say("Added the CHANGELOG entry too."),
			}}}})
			s := NewSession(t, c.client, srv, Options{})
			run := s.Start(c.args...)
			id := pollCheckpoint(t, s)
			waitPresence(t, s, id, "busy")
			s.MustCkpt("--agent", "lead", "tell", id, message)
			openGate(t, s)
			if _, err := run.Wait(); err != nil {
				t.Fatal(err)
			}
			var told *Request
			reqs := srv.Requests()
			for i, r := range reqs {
				if r.Script && r.Contains(message) {
					told = &reqs[i]
					break
				}
			}
			if told == nil {
				t.Fatal("no model request carried the told message")
			}
			if !told.Contains("The migration ran.") || !told.Contains("lead") {
				t.Errorf("the message reached the model before the turn's answer, or without its sender (turn %d)", told.Turns)
			}
			if pending := field(s.ShowJSON(id), "messages"); pending != "" {
				t.Errorf("messages still pending after delivery: %s", pending)
			}
		})
	}
}
