package agenttest

import "testing"

// TestClaudeCodeAPIErrorEndsTheSession: a turn that fails with API 529 and
// CLAUDE_CODE_MAX_RETRIES=0 makes Claude Code start StopFailure and
// SessionEnd together and exit without waiting for them; once both hooks
// have finished, whatever their order, the session reads ended (it closed
// cleanly), never dead or waiting.
func TestClaudeCodeAPIErrorEndsTheSession(t *testing.T) {
	t.Parallel()
	const sid = "8e7d6c5b-4a39-4281-9f0e-1d2c3b4a5968"
	srv := NewServer(t, Script{Conversations: []Conversation{{Match: "Summarise the README", Steps: []Step{
		Fail(529, "overloaded_error", "Overloaded"),
	}}}})
	s := NewSession(t, ClaudeCode, srv, Options{Record: true})
	s.Env = append(s.Env, "CLAUDE_CODE_MAX_RETRIES=0")
	run := s.Start(ClaudeArgs("Summarise the README", "--session-id", sid)...)
	if _, err := run.Wait(); err == nil {
		t.Fatal("claude -p exited 0 after an API error")
	}
	run.WaitHooks()
	var events []string
	for _, e := range s.Recording() {
		events = append(events, e.Event)
	}
	if !containsAll(events, "StopFailure", "SessionEnd") {
		t.Fatalf("hooks %v: want StopFailure and SessionEnd", events)
	}
	v := s.ShowJSON("proj/session-" + sid)
	if got := field(v, "presence.state"); got != "ended" {
		t.Errorf("presence %q (%s), want ended", got, field(v, "presence.why"))
	}
}

func containsAll(list []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, l := range list {
			found = found || l == w
		}
		if !found {
			return false
		}
	}
	return true
}
