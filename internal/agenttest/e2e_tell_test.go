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
