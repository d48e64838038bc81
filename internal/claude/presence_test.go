package claude

import (
	"context"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestPresenceSignals drives one session through the events that carry
// presence, with Claude Code 2.1 payloads, and checks the state each one
// leaves in the liveness record.
func TestPresenceSignals(t *testing.T) {
	h := newHandler(t)
	proc := &ckpt.Process{Host: "h1", PID: 4242, Start: "99"}
	h.Process = func() *ckpt.Process { return proc }
	// Before the session's first prompt there is no checkpoint: presence
	// events create none and say nothing.
	if out, errs := hook(t, h, "PreToolUse", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`); out != "" || errs != "" {
		t.Fatalf("PreToolUse without a checkpoint: out %q err %q", out, errs)
	}
	if n := count(t, h); n != 0 {
		t.Fatalf("%d checkpoints after a presence event", n)
	}
	steps := []struct {
		event, payload string
		state          ckpt.PresenceState
		reason         string
	}{
		{"UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"UserPromptSubmit","prompt":"fix it"}`, ckpt.PresenceWorking, ""},
		{"PreToolUse", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./...\necho done","description":"Run tests"},"tool_use_id":"toolu_1"}`, ckpt.PresenceBusy, "Bash: go test ./..."},
		{"Notification", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"Notification","message":"Claude needs your permission to use Bash","notification_type":"permission_prompt"}`, ckpt.PresenceWaiting, "permission_prompt: Claude needs your permission to use Bash"},
		{"PostToolUse", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok"},"tool_use_id":"toolu_1"}`, ckpt.PresenceWorking, ""},
		{"PreToolUse", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PreToolUse","tool_name":"Task","tool_input":{"description":"Explore the auth code","subagent_type":"Explore"}}`, ckpt.PresenceBusy, "Task: Explore the auth code"},
		{"SubagentStart", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"SubagentStart","agent_id":"a1","agent_type":"Explore"}`, ckpt.PresenceBusy, "subagent Explore"},
		{"SubagentStop", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"SubagentStop","agent_id":"a1","agent_type":"Explore","last_assistant_message":"Found it."}`, ckpt.PresenceWorking, ""},
		{"PostToolUseFailure", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PostToolUseFailure","tool_name":"Bash","error":"exit 1"}`, ckpt.PresenceWorking, ""},
		{"Stop", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done for now."}`, ckpt.PresenceWaiting, "turn ended"},
		{"Notification", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"Notification","message":"Claude is waiting for your input","notification_type":"idle_prompt"}`, ckpt.PresenceWaiting, "idle_prompt: Claude is waiting for your input"},
		{"Notification", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"Notification","message":"Logged in","notification_type":"auth_success"}`, ckpt.PresenceWaiting, "idle_prompt: Claude is waiting for your input"},
		{"UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"UserPromptSubmit","prompt":"go on"}`, ckpt.PresenceWorking, ""},
		{"StopFailure", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"StopFailure","error":"rate_limit"}`, ckpt.PresenceWaiting, "turn failed: rate_limit"},
		{"PreCompact", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PreCompact","trigger":"auto"}`, ckpt.PresenceBusy, "compacting (auto)"},
		{"SessionStart", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"SessionStart","source":"compact"}`, ckpt.PresenceWorking, "session start: compact"},
		{"PermissionRequest", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PermissionRequest","tool_name":"Bash"}`, ckpt.PresenceWaiting, "permission: Bash"},
		{"SessionEnd", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"SessionEnd","reason":"prompt_input_exit"}`, ckpt.PresenceEnded, "session ended (prompt_input_exit)"},
	}
	for i, st := range steps {
		var before int64 = -1
		if i > 0 {
			before = state(t, h, id).Rev
		}
		if _, errs := hook(t, h, st.event, st.payload); errs != "" {
			t.Fatalf("%d %s: stderr %q", i, st.event, errs)
		}
		c := state(t, h, id)
		p := c.Heartbeat.Presence
		if p == nil || p.State != st.state || p.Reason != st.reason {
			t.Fatalf("%d %s: presence %+v; want %s %q", i, st.event, p, st.state, st.reason)
		}
		if p.Process == nil || *p.Process != *proc {
			t.Fatalf("%d %s: process %+v; want %+v", i, st.event, p.Process, proc)
		}
		// The presence is never older than the last update, so views do
		// not void it (ckpt.PresenceOf rule 3).
		if c.UpdatedAt.After(c.Heartbeat.LastBeat) {
			t.Fatalf("%d %s: updated %v after the last beat %v", i, st.event, c.UpdatedAt, c.Heartbeat.LastBeat)
		}
		switch st.event {
		case "PreToolUse", "Notification", "SubagentStart", "StopFailure", "PermissionRequest", "SessionStart":
			if c.Rev != before {
				t.Fatalf("%d %s: rev %d → %d; a presence event writes no history", i, st.event, before, c.Rev)
			}
		}
	}
}

func TestWaitingReason(t *testing.T) {
	for _, tc := range []struct{ typ, msg, want string }{
		{"permission_prompt", "Claude needs your permission to use Bash", "permission_prompt: Claude needs your permission to use Bash"},
		{"", "Claude needs your permission to use Edit", "permission_prompt: Claude needs your permission to use Edit"},
		{"", "Claude is waiting for your input", "idle_prompt: Claude is waiting for your input"},
		{"ToolPermission", "Allow run_shell_command?", "ToolPermission: Allow run_shell_command?"},
		{"elicitation_dialog", "", "elicitation_dialog"},
		{"auth_success", "ok", ""},
		{"", "", ""},
	} {
		if got := waitingReason(Input{NotificationType: tc.typ, Message: tc.msg}); got != tc.want {
			t.Errorf("waitingReason(%q, %q) = %q; want %q", tc.typ, tc.msg, got, tc.want)
		}
	}
}

// TestCodeStateRecordedWhenItMoves: the hooks record where the code is at
// session start, after a subagent's step, at the end of a turn and in the
// final checkpoint, and only when it moved.
func TestCodeStateRecordedWhenItMoves(t *testing.T) {
	h := newHandler(t)
	cur := &ckpt.CodeState{Root: "/w/app", Host: "h1", Branch: "main", Head: "aaa", Uncommitted: 0}
	probes := 0
	h.Code = func(context.Context) (*ckpt.CodeState, error) {
		probes++
		cs := *cur
		cs.At = t0.Add(time.Duration(probes) * time.Second)
		return &cs, nil
	}
	codeEvents := func() int {
		evs, err := h.Store.History(context.Background(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evs {
			if e.Type == ckpt.EventCode {
				n++
			}
		}
		return n
	}
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	if n := codeEvents(); n != 1 {
		t.Fatalf("%d code events after the creating prompt, want 1", n)
	}
	hook(t, h, "Stop", `{"session_id":"s1","cwd":"/w/app","last_assistant_message":"a"}`)
	if n := codeEvents(); n != 1 {
		t.Fatalf("%d code events after a turn that moved nothing, want 1", n)
	}
	cur.Uncommitted = 2
	hook(t, h, "Stop", `{"session_id":"s1","cwd":"/w/app","last_assistant_message":"b"}`)
	cur.Head = "bbb"
	hook(t, h, "SubagentStop", `{"session_id":"s1","agent_id":"x","agent_type":"Explore"}`)
	cur.Branch = "fix"
	hook(t, h, "SessionEnd", `{"session_id":"s1","reason":"exit"}`)
	if n := codeEvents(); n != 4 {
		t.Fatalf("%d code events, want 4", n)
	}
	c := state(t, h, id)
	if c.Code == nil || c.Code.Branch != "fix" || c.Code.Head != "bbb" || c.Code.Uncommitted != 2 {
		t.Fatalf("recorded code %+v", c.Code)
	}
	if p := c.Heartbeat.Presence; p == nil || p.State != ckpt.PresenceEnded || c.UpdatedAt.After(c.Heartbeat.LastBeat) {
		t.Fatalf("after SessionEnd: presence %+v, updated %v, beat %v", p, c.UpdatedAt, c.Heartbeat.LastBeat)
	}
}
