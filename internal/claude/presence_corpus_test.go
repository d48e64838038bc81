package claude

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The status corpus's hand-written traces (testdata/presence): scenarios
// built here, each step with the state a view must show after it, written
// out by `go test -run TestPresenceCorpusIsCurrent -update-corpus
// ./internal/claude` and replayed by TestPresenceReplayCorpus. The expected
// states are written by hand below, never computed by the code under test.

var updateCorpus = flag.Bool("update-corpus", false, "rewrite testdata/presence from the scenarios")

// cstep is one line of a scenario and the state expected after it.
type cstep struct {
	line replayLine
	want string
}

// scenario is one trace of the corpus.
type scenario struct {
	name   string // <client>-<scenario>
	client string
	what   string // the .md's description
	steps  []cstep
	end    string // the state once every process has exited
}

// sb builds a scenario's steps for one client, in its own event and tool
// names, at increasing times.
type sb struct {
	client string
	at     int64
	sid    string
	pid    int
	steps  []cstep
}

func newSB(client string) *sb { return &sb{client: client, sid: "sess-1", pid: 1} }

func (b *sb) add(event string, payload map[string]any, want string) *sb {
	b.at += 250
	if payload == nil {
		payload = map[string]any{}
	}
	if !strings.HasPrefix(event, "#") {
		payload["session_id"] = b.sid
		payload["hook_event_name"] = event
		payload["cwd"] = "/w/app"
	}
	raw, _ := json.Marshal(payload)
	b.steps = append(b.steps, cstep{line: replayLine{Client: b.client, Event: event, OffsetMS: b.at, Payload: raw, PID: b.pid}, want: want})
	return b
}

// late makes the last step a slow hook: it started delay ms before the
// step before it and lands now (the lines are in delivery order).
func (b *sb) late(delay int64) *sb {
	s := &b.steps[len(b.steps)-1]
	s.line.DeliverMS, s.line.OffsetMS = s.line.OffsetMS, s.line.OffsetMS-delay
	return b
}

// geminiNames are Gemini CLI's names of the events it names otherwise.
var geminiNames = map[string]string{"UserPromptSubmit": "BeforeAgent", "PreToolUse": "BeforeTool", "PostToolUse": "AfterTool",
	"Stop": "AfterAgent", "PreCompact": "PreCompress"}

// ev is event name as b's client names it.
func (b *sb) ev(name string) string {
	if g, ok := geminiNames[name]; ok && b.client == "gemini" {
		return g
	}
	return name
}

func (b *sb) shell() string {
	return map[string]string{"claude-code": "Bash", "codex": "Bash", "gemini": "run_shell_command"}[b.client]
}

func (b *sb) start(src, want string) *sb {
	return b.add(b.ev("SessionStart"), map[string]any{"source": src}, want)
}
func (b *sb) prompt(want string) *sb {
	return b.add(b.ev("UserPromptSubmit"), map[string]any{"prompt": "go on"}, want)
}
func (b *sb) pre(want string) *sb {
	return b.add(b.ev("PreToolUse"), map[string]any{"tool_name": b.shell(), "tool_input": map[string]any{"command": "go test ./..."}}, want)
}
func (b *sb) post(want string) *sb {
	return b.add(b.ev("PostToolUse"), map[string]any{"tool_name": b.shell(), "tool_input": map[string]any{"command": "go test ./..."}, "tool_response": map[string]any{"stdout": "ok"}}, want)
}
func (b *sb) stop(want string) *sb {
	return b.add(b.ev("Stop"), map[string]any{"last_assistant_message": "Done."}, want)
}
func (b *sb) end(reason, want string) *sb {
	return b.add("SessionEnd", map[string]any{"reason": reason}, want)
}

// ask is the client asking a person for permission, in its own way.
func (b *sb) ask(want string) *sb {
	switch b.client {
	case "codex":
		return b.add("PermissionRequest", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf build"}}, want)
	case "gemini":
		return b.add("Notification", map[string]any{"notification_type": "ToolPermission", "message": "Allow run_shell_command?"}, want)
	}
	return b.add("Notification", map[string]any{"notification_type": "permission_prompt", "message": "Claude needs your permission to use Bash"}, want)
}

func (b *sb) exit(want string) *sb { return b.add(evExit, nil, want) }
func (b *sb) advance(ms int64, want string) *sb {
	b.at += ms - 250
	return b.add(evAdvance, nil, want)
}
func (b *sb) person(status, reason, want string) *sb {
	return b.add(evStatus, map[string]any{"status": status, "reason": reason}, want)
}

// opening is every scenario's start: SessionStart (no checkpoint yet), the
// first prompt creates it.
func (b *sb) opening() *sb { return b.start("startup", "absent").prompt("working") }

var corpusClients = []string{"claude-code", "codex", "gemini"}

// hasEnd says whether the client fires SessionEnd (Codex does not).
func hasEnd(client string) bool { return client != "codex" }

// scenarios builds the corpus.
func scenarios() []scenario {
	var all []scenario
	add := func(name, client, what, end string, b *sb) {
		all = append(all, scenario{name: client + "-" + name, client: client, what: what, steps: b.steps, end: end})
	}
	for _, c := range corpusClients {
		finish := func(b *sb) *sb {
			if hasEnd(c) {
				return b.end("exit", "ended")
			}
			return b
		}
		add("status-clean-turn", c, "A turn with a shell tool, then the session ends (Codex: the process exits after its last Stop, with no SessionEnd).", "ended",
			finish(newSB(c).opening().pre("busy").post("working").stop("waiting")))
		add("status-kill-mid-tool", c, "The client is killed (kill -9) inside a shell tool: dead at once.", "dead",
			newSB(c).opening().pre("busy").exit("dead"))
		add("status-kill-while-asking", c, "The client is killed while it asks a person for permission: work was in flight, dead.", "dead",
			newSB(c).opening().pre("busy").ask("waiting").exit("dead"))
		add("status-kill-idle", c, "The client is killed while it idles between turns (after Stop): nothing was in flight, ended.", "ended",
			newSB(c).opening().stop("waiting").exit("ended"))
		add("status-permission-answered", c, "A permission prompt, then the answer: the tool runs and ends, waiting clears.", "ended",
			finish(newSB(c).opening().pre("busy").ask("waiting").post("working").stop("waiting")))
		add("status-slow-permission-hook", c, "The permission hook is slow: it lands after the PostToolUse of the answer, and must not bring waiting back.", "ended",
			finish(newSB(c).opening().pre("busy").post("working").ask("working").late(400).stop("waiting")))
		add("status-ckpt-wait", c, "The agent runs ckpt wait --reason: waiting for a person, whatever its process does afterwards.", "waiting",
			newSB(c).opening().person("waiting", "approve the schema change", "waiting").stop("waiting").exit("waiting"))
		add("status-ckpt-wait-answered", c, "ckpt wait, then a person answers in the session: the prompt puts the work back in progress.", "ended",
			finish(newSB(c).opening().person("waiting", "approve the schema change", "waiting").prompt("working").pre("busy").post("working").stop("waiting")))
		add("status-blocked", c, "A blocker is recorded: blocked with its text, never working, until it is cleared.", "ended",
			finish(newSB(c).opening().person("blocked", "need the DB credentials", "blocked").pre("blocked").post("blocked").person("unblocked", "", "working").stop("waiting")))
		add("status-blocked-killed", c, "Blocked, then the client is killed: still blocked (a person must unblock first).", "blocked",
			newSB(c).opening().person("blocked", "need the DB credentials", "blocked").exit("blocked"))
		add("status-failed", c, "The work is marked failed.", "failed",
			newSB(c).opening().pre("busy").person("failed", "tests red", "failed").exit("failed"))
		done := newSB(c).opening().person("done", "", "done").stop("done")
		if hasEnd(c) {
			done = done.end("exit", "done")
		}
		add("status-done", c, "The work is marked done, then the session ends.", "done", done.exit("done"))
		add("status-silent", c, "The agent goes silent while its process still runs (hung): warn past 2x, stale past 4x the interval; then the process exits: dead.", "dead",
			newSB(c).opening().advance(31*60_000, "warn").advance(30*60_000, "stale"))
		add("status-long-tool", c, "A tool that runs long: busy, never warn, until it passes the stale threshold.", "dead",
			newSB(c).opening().pre("busy").advance(45*60_000, "busy").advance(20*60_000, "stale"))
		add("status-waiting-long", c, "A permission prompt nobody answers for hours while the client runs: still waiting.", "dead",
			newSB(c).opening().pre("busy").ask("waiting").advance(3*3600_000, "waiting"))
		add("status-resume-after-kill", c, "Killed mid-tool (dead), then resumed in a new process: working again.", "ended",
			finish(resumed(newSB(c).opening().pre("busy").exit("dead")).prompt("working").stop("waiting")))
		add("status-takeover", c, "The agent dies; an operator takes the work over: the dead process binding is dropped; a new agent starts.", "ended",
			finish(newSB(c).opening().pre("busy").exit("dead").add(evTakeNew, nil, "working").restart(2).start("resume", "working").prompt("working").stop("waiting")))
		add("status-duplicated-hooks", c, "Every hook is delivered twice (a client retry).", "ended",
			finish(twice(newSB(c).opening().pre("busy").post("working").stop("waiting"))))
		add("status-blocking-error", c, "A blocking error blocks the work, with its message; clearing it returns to work.", "ended",
			finish(newSB(c).opening().pre("busy").person("blocking-error", "disk full", "blocked").post("blocked").person("error-cleared", "", "working").stop("waiting")))
		add("status-warn-recovers", c, "Quiet past the warn threshold, then the next hook: working again.", "ended",
			finish(newSB(c).opening().advance(35*60_000, "warn").pre("busy").post("working").stop("waiting")))
		add("status-stale-then-resumed", c, "The client hangs past stale and is killed; a new process resumes the session.", "ended",
			finish(resumed(newSB(c).opening().advance(65*60_000, "stale").exit("dead")).prompt("working").stop("waiting")))
		add("status-done-then-new-session", c, "Work marked done; a new session starts on it: hooks never reopen finished work, it stays done.", "done",
			newSB(c).opening().person("done", "", "done").stop("done").exit("done").restart(2).start("resume", "done").prompt("done").stop("done"))
		add("status-duplicated-kill", c, "Every hook delivered twice, then the client is killed mid-tool.", "dead",
			twice(newSB(c).opening().pre("busy")).exit("dead"))
		add("status-two-turns", c, "Two turns with tools and an answer between them.", "ended",
			finish(newSB(c).opening().pre("busy").post("working").stop("waiting").prompt("working").pre("busy").post("working").stop("waiting")))
		add("status-stop-after-wait", c, "A turn ends, the client notifies it idles, a person prompts again.", "ended",
			finish(newSB(c).opening().stop("waiting").prompt("working").stop("waiting")))
	}
	all = append(all, claudeOnly()...)
	all = append(all, geminiOnly()...)
	return all
}

// resumed continues b in a new client process: SessionStart resume.
func resumed(b *sb) *sb { return b.restart(b.pid+1).start("resume", "working") }

// restart makes the next lines come from process pid.
func (b *sb) restart(pid int) *sb { b.pid = pid; return b }

// twice repeats every step of b (a retried delivery).
func twice(b *sb) *sb {
	var out []cstep
	for _, s := range b.steps {
		out = append(out, s, s)
	}
	b.steps = out
	return b
}

// claudeOnly: what only Claude Code does (StopFailure, subagents,
// compaction, /clear, idle notifications).
func claudeOnly() []scenario {
	c := "claude-code"
	var all []scenario
	add := func(name, what, end string, b *sb) {
		all = append(all, scenario{name: c + "-" + name, client: c, what: what, steps: b.steps, end: end})
	}
	fail := func(b *sb) *sb {
		return b.add("StopFailure", map[string]any{"error": "server_error", "error_details": "529 Overloaded"}, "")
	}
	b := newSB(c).opening().end("other", "ended")
	b = fail(b)
	b.steps[len(b.steps)-1].want = "ended"
	add("status-api-error-end-first", "claude -p on an API 529: SessionEnd's beat lands, then StopFailure's: still ended.", "ended", b)
	b = fail(newSB(c).opening())
	b.steps[len(b.steps)-1].want = "waiting"
	add("status-api-error-failure-first", "claude -p on an API 529: StopFailure's beat lands first (waiting: turn failed), then SessionEnd's.", "ended", b.end("other", "ended"))
	for _, delay := range []int64{300, 900} {
		b = fail(newSB(c).opening().end("other", "ended")).late(delay + 250)
		b.steps[len(b.steps)-1].want = "ended"
		add(fmt.Sprintf("status-api-error-slow-%dms", delay), fmt.Sprintf("StopFailure's hook is %d ms slow: started before SessionEnd's, it lands after it; the session closed cleanly.", delay), "ended", b)
	}
	b = fail(newSB(c).opening())
	b.steps[len(b.steps)-1].want = "waiting"
	add("status-api-error-end-lost", "The API fails and SessionEnd's hook is killed at the client's exit: only StopFailure lands; the process is gone after a failed turn: ended, not dead.", "ended", b.exit("ended"))
	b = fail(newSB(c).opening().end("other", "ended"))
	b.steps[len(b.steps)-1].want = "ended"
	b = fail(b)
	b.steps[len(b.steps)-1].want = "ended"
	add("status-api-error-duplicated", "SessionEnd, then StopFailure delivered twice.", "ended", b)
	add("status-subagent", "A Task subagent runs a shell tool: busy while it runs.", "ended",
		newSB(c).opening().add("PreToolUse", map[string]any{"tool_name": "Task", "tool_input": map[string]any{"description": "explore"}}, "busy").
			add("SubagentStart", map[string]any{"agent_type": "Explore", "agent_id": "a1"}, "busy").pre("busy").post("working").
			add("SubagentStop", map[string]any{"agent_type": "Explore", "agent_id": "a1", "last_assistant_message": "found it"}, "working").
			add("PostToolUse", map[string]any{"tool_name": "Task"}, "working").stop("waiting").end("other", "ended"))
	add("status-compaction", "An automatic compaction mid-session: busy compacting, then working in the compacted session.", "ended",
		newSB(c).opening().add("PreCompact", map[string]any{"trigger": "auto"}, "busy").start("compact", "working").prompt("working").stop("waiting").end("other", "ended"))
	b = newSB(c).opening().stop("waiting").end("clear", "ended")
	b.sid = "sess-2"
	add("status-clear", "/clear ends the session and starts a new one in the same process: working again.", "ended",
		b.start("clear", "working").prompt("working").stop("waiting").end("exit", "ended"))
	add("status-idle-notification", "The turn ends; the idle notification; the person prompts again.", "ended",
		newSB(c).opening().stop("waiting").add("Notification", map[string]any{"notification_type": "idle_prompt", "message": "Claude is waiting for your input"}, "waiting").
			prompt("working").stop("waiting").end("prompt_input_exit", "ended"))
	add("status-auth-notification", "A notification that asks nothing (auth_success) changes nothing.", "ended",
		newSB(c).opening().pre("busy").add("Notification", map[string]any{"notification_type": "auth_success", "message": "ok"}, "busy").post("working").stop("waiting").end("exit", "ended"))
	add("status-tool-failure", "A shell tool fails (PostToolUseFailure): working again, not busy.", "ended",
		newSB(c).opening().pre("busy").add("PostToolUseFailure", map[string]any{"tool_name": "Bash", "error": "exit 1"}, "working").stop("waiting").end("other", "ended"))
	add("status-resume-after-end", "A session that ended is resumed (claude --resume, a new process, the same session ID).", "ended",
		resumed(newSB(c).opening().stop("waiting").end("exit", "ended").exit("ended")).prompt("working").stop("waiting").end("exit", "ended"))
	add("status-late-stop-after-end", "A slow Stop hook lands after SessionEnd: ended holds.", "ended",
		newSB(c).opening().end("other", "ended").stop("ended").late(500))
	return all
}

// geminiOnly: Gemini CLI's PreCompress before every model request.
func geminiOnly() []scenario {
	c := "gemini"
	b := newSB(c).opening()
	for range 4 {
		b = b.add("PreCompress", map[string]any{"trigger": "auto"}, "working").pre("busy").post("working")
	}
	return []scenario{{name: c + "-status-precompress-every-request", client: c, end: "ended",
		what:  "Gemini CLI fires PreCompress before every model request, compressing nothing: never busy compacting.",
		steps: b.stop("waiting").end("exit", "ended").steps}}
}

// render writes a scenario's trace, expectations and description.
func (s scenario) files() (trace, states, md string) {
	var t, st strings.Builder
	fmt.Fprintf(&st, "# Presence after each line of %s.jsonl (hand-written, presence_corpus_test.go), then after every process has exited.\n", s.name)
	for _, c := range s.steps {
		l := c.line
		l.Client = s.client
		b, _ := json.Marshal(l)
		t.Write(b)
		t.WriteByte('\n')
		fmt.Fprintf(&st, "%s\t%s\n", l.Event, c.want)
	}
	fmt.Fprintf(&st, "(end)\t%s\n", s.end)
	md = fmt.Sprintf("# %s\n\n**Hand-written** (`real`: false) by the status corpus's scenarios in\n`internal/claude/presence_corpus_test.go`; `go test -run TestPresenceCorpusIsCurrent\n-update-corpus ./internal/claude` writes it.\n\n## Scenario\n\n%s\n\nLines are in delivery order; `pid` is the client process that started the hook,\n`deliver_ms` when a slow hook's writes landed, and `#exit`, `#advance`,\n`#status`, `#takeover` are what happens around the hooks (see README.md).\n", s.name, s.what)
	return t.String(), st.String(), md
}

// TestPresenceCorpusIsCurrent: testdata/presence is what the scenarios
// write (-update-corpus rewrites it).
func TestPresenceCorpusIsCurrent(t *testing.T) {
	dir := filepath.Join("testdata", "presence")
	for _, s := range scenarios() {
		for i, c := range s.steps {
			if c.want == "" {
				t.Fatalf("%s step %d (%s) has no expected state", s.name, i+1, c.line.Event)
			}
		}
		trace, states, md := s.files()
		for ext, want := range map[string]string{".jsonl": trace, ".states": states, ".md": md} {
			path := filepath.Join(dir, s.name+ext)
			if *updateCorpus {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != want {
				t.Errorf("%s is not what the scenarios write (%v): rerun with -update-corpus", path, err)
			}
		}
	}
}
