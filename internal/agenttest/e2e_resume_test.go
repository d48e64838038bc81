package agenttest

import (
	"strings"
	"testing"
)

// TestClaudeCodeNewSessionGetsTheWork is issue 19's acceptance test, with
// the real Claude Code client: a session asked to add a retry budget plans
// two tasks with its own task tools, finishes the first, starts the
// second, runs a test that fails and stops; a NEW session (no --resume)
// tied to the same checkpoint by CKPT_ID receives, in the context its
// SessionStart hook adds (which the mock sees in the model request), the
// ask, both tasks with their states, the failure and the last words.
func TestClaudeCodeNewSessionGetsTheWork(t *testing.T) {
	t.Parallel()
	const id = "proj/retry-budget"
	srv := NewServer(t, Script{Conversations: []Conversation{
		{Match: retryAsk, Steps: retryBudgetSteps},
		{Match: "Go on with the work", Steps: []Step{Say("Going on with the retry budget.")}},
	}})
	s := NewSession(t, ClaudeCode, srv, Options{Files: retryBudgetFiles})
	s.Env = append(s.Env, "CKPT_ID="+id)
	s.MustRun(ClaudeArgs(retryAsk)...)
	v := waitPresence(t, s, id, "ended")
	t.Logf("the checkpoint after the first session:\n%s", s.MustCkpt("show", id))
	if got := field(v, "progress"); !strings.Contains(got, `"done":1`) || !strings.Contains(got, `"total":2`) {
		t.Errorf("progress %s, want 1 of 2 (the session's tasks)", got)
	}

	out := s.MustRun(ClaudeArgs("Go on with the work")...)
	ctxs := HookContext(out, "SessionStart")
	if len(ctxs) == 0 {
		t.Fatal("the new session's SessionStart hook added no context")
	}
	got := strings.Join(ctxs, "\n")
	t.Logf("the prompt the new session received (SessionStart additionalContext):\n%s", got)
	// It reached the model: the mock saw it in the new session's request.
	seen := false
	for _, r := range srv.Requests() {
		if r.Script && strings.Contains(r.First, "Go on with the work") && r.Contains(ctxs[0]) {
			seen = true
		}
	}
	if !seen {
		t.Error("the SessionStart context is not in the new session's model request")
	}

	facts := []struct{ what, text string }{
		{"the ask", retryAsk},
		{"task 1", retryTask1},
		{"task 2", retryTask2},
		{"the failure", "FAIL: TestRetryBudget"},
		{"the last words", retryLastWords},
	}
	for _, f := range facts {
		if !strings.Contains(got, f.text) {
			t.Errorf("missing %s: %q", f.what, f.text)
		}
	}
	if l := lineWith(got, retryTask1); l != "" && !containsAny(strings.ToLower(l), "done", "completed", "[x]", "✓") {
		t.Errorf("task 1 is not shown done: %q", l)
	}
	if l := lineWith(got, retryTask2); l != "" && !containsAny(strings.ToLower(l), "in progress", "in_progress", "current", "doing", "▶") {
		t.Errorf("task 2 is not shown in progress: %q", l)
	}
}

func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
