package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// clock returns a Now that advances by one second per call; it is safe
// for concurrent use (the racing-hooks tests call it from many goroutines).
func clock() func() time.Time {
	var mu sync.Mutex
	now := t0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Second)
		return now
	}
}

func newHandler(t *testing.T) *Handler {
	t.Helper()
	return &Handler{
		Store:    memstore.New(),
		Now:      clock(),
		Getenv:   envOf(nil),
		RepoRoot: "/w/app",
		StateDir: t.TempDir(),
		Prompt:   func(c *ckpt.Checkpoint) string { return "PROMPT " + c.ID + " " + string(c.Status) },
	}
}

// hook runs one event as `ckpt hook EVENT` does, and returns stdout and
// stderr.
func hook(t *testing.T, h *Handler, event, payload string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	var res Result
	ev, err := ParseEvent(event)
	if err == nil {
		var in Input
		if in, err = ParseInput(strings.NewReader(payload)); err == nil {
			res = h.Handle(context.Background(), ev, in)
		}
	}
	if err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	res.Write(event, &out, &errb)
	return out.String(), errb.String()
}

func state(t *testing.T, h *Handler, id string) *ckpt.Checkpoint {
	t.Helper()
	c, err := h.Store.Get(context.Background(), id, 0)
	if err != nil {
		t.Fatalf("Get %s: %v", id, err)
	}
	return c
}

const sid = "s1"
const id = "app/session-s1"

const wantNewNote = `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ckpt: this session records its work in checkpoint app/session-s1 (new). Record steps with ` +
	"`ckpt step app/session-s1 STEP --add --done`, decisions with `ckpt decision app/session-s1 TEXT`, or the ckpt MCP tools." + `"}}` + "\n"

// count returns how many checkpoints the store holds.
func count(t *testing.T, h *Handler) int {
	t.Helper()
	all, err := ckpt.ListAll(context.Background(), h.Store, ckpt.Filter{IncludeArchived: true})
	if err != nil {
		t.Fatal(err)
	}
	return len(all)
}

func TestSessionStartCreatesNothingTheFirstPromptCreatesTheCheckpoint(t *testing.T) {
	h := newHandler(t)
	out, errs := hook(t, h, "SessionStart", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"SessionStart","source":"startup"}`)
	if out != "" || errs != "" {
		t.Fatalf("SessionStart of a session that recorded nothing: out %q err %q", out, errs)
	}
	if n := count(t, h); n != 0 {
		t.Fatalf("SessionStart created %d checkpoints", n)
	}
	out, errs = hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"UserPromptSubmit","prompt":"go"}`)
	if errs != "" {
		t.Fatalf("stderr: %s", errs)
	}
	if out != wantNewNote {
		t.Errorf("first prompt\n got %s\nwant %s", out, wantNewNote)
	}
	c := state(t, h, id)
	if c.Rev != 1 || c.Title != "go" || c.Agent != (ckpt.Agent{ID: "claude-code", Type: "claude-code"}) || c.Session.ID != sid || c.Session.Number != 1 || c.Status != ckpt.StatusInProgress {
		t.Errorf("created %+v", c)
	}
	if c.Heartbeat.LastBeat.IsZero() {
		t.Error("no heartbeat")
	}
	// Only the prompt that created it says so.
	if out, _ := hook(t, h, "UserPromptSubmit", `{"session_id":"s1","prompt":"more"}`); out != "" {
		t.Errorf("second prompt printed %s", out)
	}
	// Gemini CLI names the event BeforeAgent.
	g := newHandler(t)
	g.Client = Gemini
	out, _ = hook(t, g, "BeforeAgent", `{"session_id":"s1","cwd":"/w/app","hook_event_name":"BeforeAgent","prompt":"go"}`)
	if !strings.HasPrefix(out, `{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"ckpt: this session records its work in checkpoint app/session-s1 (new).`) {
		t.Errorf("Gemini CLI's first prompt: %s", out)
	}
}

// TestAnyFirstWriteCreatesTheCheckpoint: a session whose first hook is not
// a prompt (a resumed client that missed it, a hook installed mid-session)
// still gets its checkpoint; SessionEnd and PreCompact of a session that
// recorded nothing do not create one.
func TestAnyFirstWriteCreatesTheCheckpoint(t *testing.T) {
	for ev, payload := range map[string]string{
		"PostToolUse":  `{"session_id":"s1","tool_name":"Edit","tool_use_id":"t1","tool_input":{"file_path":"/w/app/a.go"}}`,
		"SubagentStop": `{"session_id":"s1","agent_id":"a1","agent_type":"Explore"}`,
		"Stop":         `{"session_id":"s1","last_assistant_message":"done"}`,
	} {
		h := newHandler(t)
		if out, errs := hook(t, h, ev, payload); out != "" || errs != "" {
			t.Errorf("%s: out %q err %q", ev, out, errs)
		}
		if c := state(t, h, id); c.Session.ID != sid || c.Rev != 2 {
			t.Errorf("%s: created rev %d session %+v, want the created event and the event's own", ev, c.Rev, c.Session)
		}
	}
	h := newHandler(t)
	hook(t, h, "PreCompact", `{"session_id":"s1","trigger":"auto"}`)
	hook(t, h, "SessionEnd", `{"session_id":"s1","reason":"other"}`)
	if n := count(t, h); n != 0 {
		t.Errorf("PreCompact and SessionEnd of a session with no checkpoint created %d", n)
	}
}

// TestResumeFiresAStartupWithANewSessionID: `claude --resume s1` fires a
// SessionStart "resume" with s1 and a SessionStart "startup" with a new
// session ID that records nothing (Claude Code issues #23932, #24265). The
// resumed session gets its prompt and the stray one leaves nothing behind,
// with the session mapping and with CKPT_ID.
func TestResumeFiresAStartupWithANewSessionID(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	hook(t, h, "Stop", `{"session_id":"s1","cwd":"/w/app","last_assistant_message":"Half done."}`)
	before := state(t, h, id)

	out, errs := hook(t, h, "SessionStart", `{"session_id":"stray-42","cwd":"/w/app","source":"startup"}`)
	if out != "" || errs != "" {
		t.Errorf("stray startup: out %q err %q", out, errs)
	}
	out, _ = hook(t, h, "SessionStart", `{"session_id":"s1","cwd":"/w/app","source":"resume"}`)
	if !strings.Contains(out, `"additionalContext":"ckpt: this session continues checkpoint app/session-s1.`) || !strings.Contains(out, `PROMPT app/session-s1 in_progress"}}`) {
		t.Errorf("resume: %s", out)
	}
	if n := count(t, h); n != 1 {
		t.Errorf("%d checkpoints after a resume, want 1", n)
	}
	if c := state(t, h, id); c.Rev != before.Rev || c.Session != before.Session {
		t.Errorf("the resume wrote: rev %d session %+v, was rev %d session %+v", c.Rev, c.Session, before.Rev, before.Session)
	}

	// With CKPT_ID both starts map to the checkpoint: both get the prompt,
	// and the stray session starts no ckpt session on it.
	h.Getenv = envOf(map[string]string{"CKPT_ID": id})
	for _, p := range []string{`{"session_id":"stray-43","source":"startup"}`, `{"session_id":"s1","source":"resume"}`} {
		if out, _ := hook(t, h, "SessionStart", p); !strings.Contains(out, "PROMPT app/session-s1") {
			t.Errorf("SessionStart %s with CKPT_ID: %s", p, out)
		}
	}
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","prompt":"go on"}`)
	// The prompt is kept as an ask (one event); no session starts.
	if c := state(t, h, id); c.Rev != before.Rev+1 || c.Session != before.Session || c.ResumesWithoutProgress != 0 {
		t.Errorf("after a stray start under CKPT_ID: rev %d session %+v resumes %d", c.Rev, c.Session, c.ResumesWithoutProgress)
	}
}

func TestSessionStartResumesAndReturnsThePrompt(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go"}`)
	h.Getenv = envOf(map[string]string{"CKPT_ID": id, "CKPT_AGENT": "worker-3"})

	// Compaction keeps the session: no new session, the prompt comes back.
	out, _ := hook(t, h, "SessionStart", `{"session_id":"s1","source":"compact"}`)
	if c := state(t, h, id); c.Rev != 1 || c.Session.Number != 1 {
		t.Errorf("compact started a session: rev %d, session %d", c.Rev, c.Session.Number)
	}
	if !strings.Contains(out, `this session continues checkpoint app/session-s1.`) || !strings.Contains(out, `PROMPT app/session-s1 in_progress"}}`) {
		t.Errorf("compact output %s", out)
	}

	// A new client session on the same checkpoint gets the prompt at once
	// and starts a ckpt session on it with its first prompt.
	out, _ = hook(t, h, "SessionStart", `{"session_id":"s2","source":"startup"}`)
	if !strings.Contains(out, `PROMPT app/session-s1 in_progress"}}`) {
		t.Errorf("new session's start: %s", out)
	}
	if c := state(t, h, id); c.Rev != 1 {
		t.Errorf("SessionStart wrote: rev %d", c.Rev)
	}
	if out, errs := hook(t, h, "UserPromptSubmit", `{"session_id":"s2","prompt":"continue"}`); out != "" || errs != "" {
		t.Errorf("new session's first prompt: out %q err %q", out, errs)
	}
	c := state(t, h, id)
	if c.Rev != 3 || c.Session.ID != "s2" || c.Session.Number != 2 {
		t.Errorf("after the new session's prompt: rev %d session %+v", c.Rev, c.Session)
	}
	hist, _ := h.Store.History(context.Background(), id, 2, 0)
	if len(hist) != 2 || hist[0].Type != ckpt.EventResumed || hist[0].Actor != (ckpt.Actor{Agent: "worker-3", Session: "s2"}) || hist[1].Type != ckpt.EventUpdate {
		t.Errorf("resume event, then the ask: %+v", hist)
	}
	// The same prompt again (a retried hook) appends nothing; another
	// prompt is kept as the latest ask; the title stays the first prompt.
	hook(t, h, "UserPromptSubmit", `{"session_id":"s2","prompt":"continue"}`)
	if c := state(t, h, id); c.Rev != 3 {
		t.Errorf("a retried prompt appended: rev %d", c.Rev)
	}
	hook(t, h, "UserPromptSubmit", `{"session_id":"s2","prompt":"more"}`)
	c = state(t, h, id)
	var asks []Ask
	_ = json.Unmarshal(c.Meta["asks"], &asks)
	if c.Rev != 4 || c.Title != "go" || len(asks) != 3 || asks[2].Text != "more" || asks[2].Session != "s2" {
		t.Errorf("after a later prompt: rev %d title %q asks %+v", c.Rev, c.Title, asks)
	}
}

func TestSessionStartDoesNotReopenFinishedWork(t *testing.T) {
	h := newHandler(t)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app"}`)
	done := ckpt.StatusDone
	if _, err := h.Store.Append(context.Background(), id, ckpt.MustEvent(ckpt.EventUpdate, t0, ckpt.Actor{}, ckpt.Patch{Status: &done}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	h.Getenv = envOf(map[string]string{"CKPT_ID": id})
	out, _ := hook(t, h, "SessionStart", `{"session_id":"s9","source":"startup"}`)
	hook(t, h, "UserPromptSubmit", `{"session_id":"s9","prompt":"go"}`)
	if c := state(t, h, id); c.Status != ckpt.StatusDone || c.Session.ID != sid {
		t.Errorf("a done checkpoint was reopened: %s, session %s", c.Status, c.Session.ID)
	}
	if !strings.Contains(out, "PROMPT app/session-s1 done") {
		t.Errorf("output %s", out)
	}
}

func TestSessionStartWithTheRealPromptStaysUnderTheLimit(t *testing.T) {
	h := newHandler(t)
	h.Prompt = func(c *ckpt.Checkpoint) string { return render.NewPrompt(c).Markdown() }
	h.Getenv = envOf(map[string]string{"CKPT_ID": "big"})
	ctx := context.Background()
	steps := make([]ckpt.Step, 300)
	for i := range steps {
		steps[i] = ckpt.Step{ID: strings.Repeat("s", 20) + string(rune('a'+i%26)) + time.Duration(i).String(), Title: strings.Repeat("a long step title ", 10)}
	}
	title := "Big task"
	if _, err := h.Store.Append(ctx, "big", ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}, Steps: steps}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	out, errs := hook(t, h, "SessionStart", `{"session_id":"s1"}`)
	if errs != "" {
		t.Fatal(errs)
	}
	if n := utf16Len([]byte(out)); n >= MaxOutputChars || !json.Valid([]byte(out)) {
		t.Errorf("output is %d characters (valid JSON: %v)", n, json.Valid([]byte(out)))
	}
	if !strings.Contains(out, "Big task") {
		t.Errorf("the prompt is missing: %.300s", out)
	}
}

func TestUserPromptSubmitBeatsAndBacksUpEveryFifthPrompt(t *testing.T) {
	h := newHandler(t)
	var backups []string
	h.Backup = func(_ context.Context, id string) error { backups = append(backups, id); return nil }
	for i := 0; i < 11; i++ {
		out, errs := hook(t, h, "UserPromptSubmit", `{"session_id":"s1","cwd":"/w/app","prompt":"go on"}`)
		if i == 0 && out != wantNewNote || i > 0 && out != "" || errs != "" {
			t.Fatalf("prompt %d: out %q err %q", i, out, errs)
		}
	}
	if d := cmp.Diff([]string{id, id}, backups); d != "" {
		t.Errorf("backups (-want +got):\n%s", d)
	}
	c := state(t, h, id)
	if c.Rev != 1 {
		t.Errorf("prompts grew the history to rev %d", c.Rev)
	}
	if !c.Heartbeat.LastBeat.After(t0.Add(10 * time.Second)) {
		t.Errorf("last beat %v is not the last prompt's", c.Heartbeat.LastBeat)
	}
	h.Backup = func(context.Context, string) error { return errors.New("disk full") }
	for i := 0; i < 3; i++ {
		hook(t, h, "UserPromptSubmit", `{"session_id":"s1"}`)
	}
	if _, errs := hook(t, h, "UserPromptSubmit", `{"session_id":"s1"}`); !strings.Contains(errs, "backup: disk full") {
		t.Errorf("failed backup not reported: %q", errs)
	}
}

func TestPostToolUseRecordsFilesAndSyncsPlans(t *testing.T) {
	h := newHandler(t)
	var synced []string
	h.SyncPlan = func(_ context.Context, id, path string) error { synced = append(synced, path); return nil }
	write := `{"session_id":"s1","cwd":"/w/app","hook_event_name":"PostToolUse","tool_name":"Write","tool_use_id":"t1","tool_input":{"file_path":"/w/app/src/new.go","content":"x"},"tool_response":{"type":"create","filePath":"/w/app/src/new.go"}}`
	edit := `{"session_id":"s1","cwd":"/w/app/sub","tool_name":"Edit","tool_use_id":"t2","tool_input":{"file_path":"../README.md","old_string":"a","new_string":"b"}}`
	plan := `{"session_id":"s1","cwd":"/w/app","tool_name":"MultiEdit","tool_use_id":"t3","tool_input":{"file_path":"plans/p1/plan.md","edits":[]}}`
	outside := `{"session_id":"s1","cwd":"/w/app","tool_name":"Edit","tool_use_id":"t4","tool_input":{"file_path":"/etc/hosts"}}`
	for _, p := range []string{write, write, edit, plan, outside, edit} {
		if out, errs := hook(t, h, "PostToolUse", p); out != "" || errs != "" {
			t.Fatalf("out %q err %q", out, errs)
		}
	}
	c := state(t, h, id)
	if d := cmp.Diff(ckpt.Files{Created: []string{"src/new.go"}, Modified: []string{"README.md", "plans/p1/plan.md", "/etc/hosts"}}, c.Files); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	if c.Rev != 5 { // created + 4 distinct recordings; the repeats appended nothing
		t.Errorf("rev %d, want 5", c.Rev)
	}
	if d := cmp.Diff([]string{"/w/app/plans/p1/plan.md"}, synced); d != "" {
		t.Errorf("synced (-want +got):\n%s", d)
	}
	// A read is not an edit, and a failing sync is a warning.
	h.SyncPlan = func(context.Context, string, string) error { return errors.New("plan.md: no markers") }
	hook(t, h, "PostToolUse", `{"session_id":"s1","tool_name":"Read","tool_input":{"file_path":"/w/app/x"}}`)
	if _, errs := hook(t, h, "PostToolUse", plan); !strings.Contains(errs, "syncing /w/app/plans/p1/plan.md: plan.md: no markers") {
		t.Errorf("stderr %q", errs)
	}
	if c := state(t, h, id); c.Rev != 5 {
		t.Errorf("rev %d after a read and a repeat, want 5", c.Rev)
	}
}

func TestSubagentStopRecordsAStep(t *testing.T) {
	h := newHandler(t)
	p := `{"session_id":"s1","cwd":"/w/app","hook_event_name":"SubagentStop","agent_id":"def456","agent_type":"Explore","last_assistant_message":"\n  Found 3 issues in auth.\nDetails follow."}`
	hook(t, h, "SubagentStop", p)
	hook(t, h, "SubagentStop", p) // retried: nothing new
	hook(t, h, "SubagentStop", `{"session_id":"s1","subagent_type":"Plan"}`)
	hook(t, h, "SubagentStop", `{"session_id":"s1","subagent_type":"Plan"}`)
	// Claude Code 2.1 fires a SubagentStop with no agent type for a
	// compaction, the summary as its message: not a subagent's step.
	hook(t, h, "SubagentStop", `{"session_id":"s1","hook_event_name":"SubagentStop","agent_id":"","agent_type":"","last_assistant_message":"This session is being continued from a previous conversation that ran out of context. Summary: ..."}`)
	hook(t, h, "SubagentStop", `{"session_id":"s1"}`)
	c := state(t, h, id)
	type row struct{ ID, Title, By, Notes string }
	var got []row
	for _, s := range c.Steps {
		if s.Status != ckpt.StepDone || s.CompletedAt == nil {
			t.Errorf("step %s is %s", s.ID, s.Status)
		}
		got = append(got, row{s.ID, s.Title, s.By, s.Notes})
	}
	want := []row{
		{"subagent-def456", "Explore subagent: Found 3 issues in auth.", "subagent:Explore", "Found 3 issues in auth.\nDetails follow."},
		{"subagent-plan-1", "Plan subagent", "subagent:Plan", ""},
		{"subagent-plan-2", "Plan subagent", "subagent:Plan", ""},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

// loopCheckpoint creates a checkpoint with two steps, the first done.
func loopCheckpoint(t *testing.T, h *Handler, meta string) {
	t.Helper()
	c := ckpt.Created{Steps: []ckpt.Step{{ID: "spec", Title: "Write the spec", Status: ckpt.StepDone}, {ID: "impl", Title: "Implement it"}}}
	if meta != "" {
		c.Meta = map[string]json.RawMessage{"task_loop": json.RawMessage(meta)}
	}
	if _, err := h.Store.Append(context.Background(), id, ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, c), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

const wantBlock = `{"decision":"block","reason":"ckpt task loop: checkpoint app/session-s1 has 1 of 2 steps done. Next step: Implement it (id impl). Continue with it now and record each finished step with ` +
	"`ckpt step app/session-s1 impl --done`. When the whole task is finished, end your reply with TASK_COMPLETE." + `"}` + "\n"

func TestStopPersistsTheLastMessage(t *testing.T) {
	h := newHandler(t)
	loopCheckpoint(t, h, "")
	out, errs := hook(t, h, "Stop", `{"session_id":"s1","stop_hook_active":false,"last_assistant_message":"Implemented half."}`)
	if out != "" || errs != "" {
		t.Fatalf("without a loop: out %q err %q", out, errs)
	}
	hook(t, h, "Stop", `{"session_id":"s1","last_assistant_message":"Implemented half."}`) // retried
	c := state(t, h, id)
	var last map[string]string
	if err := json.Unmarshal(c.Meta["last_message"], &last); err != nil || last["text"] != "Implemented half." || last["session"] != sid {
		t.Errorf("last_message %s (%v)", c.Meta["last_message"], err)
	}
	if c.Rev != 2 {
		t.Errorf("rev %d, want 2 (one Stop event)", c.Rev)
	}
}

// TestStopActsOnTheCurrentStateAfterARetry: a Stop that repeats the last
// message is a retried event (its key was applied), and the store answers
// it with the state right after the first attempt. The hook must act on the
// checkpoint as it is now: the loop turned on since, the step done since.
func TestStopActsOnTheCurrentStateAfterARetry(t *testing.T) {
	fs, err := filestore.Init(filepath.Join(t.TempDir(), ".ckpt"), filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	for name, store := range map[string]ckpt.Store{"memstore": memstore.New(), "filestore": fs} {
		t.Run(name, func(t *testing.T) {
			h := newHandler(t)
			h.Store = store
			loopCheckpoint(t, h, "")
			ctx := context.Background()
			stop := `{"session_id":"s1","last_assistant_message":"Done with this part."}`
			if out, errs := hook(t, h, "Stop", stop); out != "" || errs != "" {
				t.Fatalf("loop off: out %q err %q", out, errs)
			}
			rev := state(t, h, id).Rev
			on := ckpt.MustEvent(ckpt.EventUpdate, t0, ckpt.Actor{}, ckpt.Patch{Meta: map[string]json.RawMessage{"task_loop": json.RawMessage(`"true"`)}})
			if _, err := store.Append(ctx, id, on, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if out, errs := hook(t, h, "Stop", stop); out != wantBlock || errs != "" {
				t.Errorf("the same Stop after task_loop=true\n got %q (err %q)\nwant %s", out, errs, wantBlock)
			}
			if c := state(t, h, id); c.Rev != rev+1 {
				t.Errorf("the retried Stop appended: rev %d, want %d", c.Rev, rev+1)
			}
			// The last step done since the first attempt: nothing is left.
			if _, err := store.Append(ctx, id, ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "impl", Status: ckpt.StepDone}), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			if out, errs := hook(t, h, "Stop", stop); out != "" || errs != "" {
				t.Errorf("the same Stop with every step done: out %q err %q", out, errs)
			}
		})
	}
}

func TestStopTaskLoop(t *testing.T) {
	h := newHandler(t)
	h.Loop = TaskLoop{Enabled: true, MaxBlocks: 2}
	loopCheckpoint(t, h, "")
	stop := func(active bool, msg string) (string, string) {
		p, _ := json.Marshal(map[string]any{"session_id": sid, "stop_hook_active": active, "last_assistant_message": msg})
		return hook(t, h, "Stop", string(p))
	}
	if out, _ := stop(false, "Started."); out != wantBlock {
		t.Errorf("first stop\n got %s\nwant %s", out, wantBlock)
	}
	if out, _ := stop(true, "Working."); out != wantBlock {
		t.Errorf("second stop (under the cap): %s", out)
	}
	out, errs := stop(true, "Still working.")
	if out != "" || !strings.Contains(errs, "task loop stopped after 2 blocks in a row without TASK_COMPLETE") {
		t.Errorf("at the cap: out %q err %q", out, errs)
	}
	// A new turn starts counting again; the token lets the agent stop.
	if out, _ := stop(false, "Next turn."); out != wantBlock {
		t.Errorf("new turn: %q", out)
	}
	if out, errs := stop(true, "All done. TASK_COMPLETE"); out != "" || errs != "" {
		t.Errorf("with the token: out %q err %q", out, errs)
	}
	// With no step left there is nothing to continue with.
	if _, err := h.Store.Append(context.Background(), id, ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "impl", Status: ckpt.StepDone}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, _ := stop(false, "Done?"); out != "" {
		t.Errorf("no steps left: %q", out)
	}
}

func TestStopTaskLoopPerCheckpointAndWithoutState(t *testing.T) {
	h := newHandler(t)
	loopCheckpoint(t, h, `{"token":"ALL_DONE","max_blocks":1}`)
	out, _ := hook(t, h, "Stop", `{"session_id":"s1","last_assistant_message":"x TASK_COMPLETE"}`)
	if !strings.Contains(out, `end your reply with ALL_DONE.`) {
		t.Errorf("meta loop with its own token: %q", out)
	}
	if out, _ := hook(t, h, "Stop", `{"session_id":"s1","stop_hook_active":true,"last_assistant_message":"y"}`); out != "" {
		t.Errorf("past max_blocks 1: %q", out)
	}

	h2 := newHandler(t)
	h2.StateDir = ""
	h2.Loop.Enabled = true
	loopCheckpoint(t, h2, "")
	if out, _ := hook(t, h2, "Stop", `{"session_id":"s1"}`); out != wantBlock {
		t.Errorf("first stop without state: %q", out)
	}
	if out, _ := hook(t, h2, "Stop", `{"session_id":"s1","stop_hook_active":true}`); out != "" {
		t.Errorf("without state the loop must honour stop_hook_active: %q", out)
	}

	h3 := newHandler(t)
	h3.Loop.Enabled = true
	loopCheckpoint(t, h3, "false")
	if out, _ := hook(t, h3, "Stop", `{"session_id":"s1"}`); out != "" {
		t.Errorf("task_loop false on the checkpoint: %q", out)
	}

	h4 := newHandler(t)
	loopCheckpoint(t, h4, `"true"`) // as `ckpt update --meta task_loop=true` stores it
	if out, _ := hook(t, h4, "Stop", `{"session_id":"s1"}`); out != wantBlock {
		t.Errorf("task_loop \"true\" on the checkpoint: %q", out)
	}
}

func TestFinalCheckpointOnPreCompactAndSessionEnd(t *testing.T) {
	h := newHandler(t)
	var ran []string
	h.Final = []FinalStep{
		{Name: "progress file", Run: func(_ context.Context, c *ckpt.Checkpoint) error { ran = append(ran, "progress@"+c.ID); return nil }},
		{Name: "tracker", Run: func(context.Context, *ckpt.Checkpoint) error {
			ran = append(ran, "tracker")
			return errors.New("HTTP 503")
		}},
		{Name: "last", Run: func(context.Context, *ckpt.Checkpoint) error { ran = append(ran, "last"); return nil }},
	}
	// No checkpoint yet: nothing to finalise, nothing said.
	if out, errs := hook(t, h, "SessionEnd", `{"session_id":"s1","reason":"other"}`); out != "" || errs != "" || ran != nil {
		t.Fatalf("no checkpoint: out %q err %q ran %v", out, errs, ran)
	}
	if out, errs := hook(t, h, "SessionStart", `{"session_id":"s1"}`); out != "" || errs != "" {
		t.Fatalf("SessionStart of a new session: out %q err %q", out, errs)
	}
	hook(t, h, "UserPromptSubmit", `{"session_id":"s1"}`)
	_, errs := hook(t, h, "PreCompact", `{"session_id":"s1","trigger":"manual","custom_instructions":"keep decisions\nmore"}`)
	if !strings.Contains(errs, "final step tracker failed: HTTP 503") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q", errs)
	}
	hook(t, h, "SessionEnd", `{"session_id":"s1","reason":"prompt_input_exit"}`)
	c := state(t, h, id)
	notes := strings.Split(c.Context.Notes, "\n")
	if len(notes) != 2 || !strings.HasPrefix(notes[0], "Context compacted (manual) in session s1: keep decisions at ") ||
		!strings.HasPrefix(notes[1], "Session s1 ended (prompt_input_exit) at ") {
		t.Errorf("notes %q", c.Context.Notes)
	}
	if d := cmp.Diff([]string{"progress@" + id, "tracker", "last", "progress@" + id, "tracker", "last"}, ran); d != "" {
		t.Errorf("final steps (-want +got):\n%s", d)
	}
}

func TestHooksFailForward(t *testing.T) {
	for name, tt := range map[string]struct {
		h       *Handler
		event   string
		payload string
		warn    string
	}{
		"no store":         {&Handler{}, "Stop", `{"session_id":"s1"}`, "no ckpt store: run `ckpt init`"},
		"store not opened": {&Handler{OpenErr: errors.New("opening /p/.ckpt: unknown format version 9")}, "SessionStart", `{}`, "unknown format version 9; hooks record nothing"},
		"bad payload":      {newHandler(t), "Stop", `{"session_id":`, "hook payload is not a JSON object"},
		"unknown event":    {newHandler(t), "TeammateIdle", `{}`, `unknown hook event "TeammateIdle"`},
		"no checkpoint ID": {&Handler{Store: memstore.New()}, "SessionStart", `{"cwd":"/x"}`, "set CKPT_ID"},
		"panicking prompt": {&Handler{Store: memstore.New(), Prompt: func(*ckpt.Checkpoint) string { panic("boom") }, Getenv: envOf(map[string]string{"CKPT_ID": "x"})}, "SessionStart", `{}`, "internal error: boom"},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "panicking prompt" {
				hook(t, tt.h, "UserPromptSubmit", `{}`) // create it; the start renders the prompt
			}
			out, errs := hook(t, tt.h, tt.event, tt.payload)
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errs, tt.warn) || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "ckpt hook "+tt.event+": warning: ") {
				t.Errorf("stderr %q, want one line with %q", errs, tt.warn)
			}
		})
	}
}

func TestHooksFailForwardOnADamagedStore(t *testing.T) {
	dir := t.TempDir()
	st, err := filestore.Init(dir, filestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := &Handler{Store: st, Getenv: envOf(map[string]string{"CKPT_ID": "kai-7/a"}), StateDir: t.TempDir()}
	if _, errs := hook(t, h, "UserPromptSubmit", `{"session_id":"s1"}`); errs != "" {
		t.Fatal(errs)
	}
	hook(t, h, "SubagentStop", `{"session_id":"s1","agent_type":"Explore"}`)
	cpDir := filepath.Join(dir, "checkpoints", "kai-7+a") // Init's dir is the .ckpt directory itself
	hist := filepath.Join(cpDir, "history.jsonl")
	data, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	data[20] ^= 0x01 // flip a bit in the first line
	if err := os.WriteFile(hist, data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cpDir, "state.json"))
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "SessionEnd"} {
		out, errs := hook(t, h, ev, `{"session_id":"s2","agent_type":"Plan","last_assistant_message":"m"}`)
		t.Logf("%s: %s", ev, errs)
		if out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "kai-7/a") {
			t.Errorf("%s on a damaged checkpoint: out %q err %q", ev, out, errs)
		}
	}
	after, _ := os.ReadFile(hist)
	if !bytes.Equal(after, data) {
		t.Error("hooks wrote to a damaged history")
	}
}

// benchHandler is a Handler on a real filestore, as `ckpt hook` runs.
func benchHandler(b *testing.B) *Handler {
	st, err := filestore.Init(filepath.Join(b.TempDir(), ".ckpt"), filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	h := &Handler{Store: st, Getenv: envOf(map[string]string{"CKPT_ID": "bench/a"}), StateDir: b.TempDir(), RepoRoot: "/w/app",
		Prompt: func(c *ckpt.Checkpoint) string { return render.NewPrompt(c).Markdown() }}
	h.Handle(context.Background(), EventUserPromptSubmit, Input{SessionID: "s1"})
	return h
}

func BenchmarkHook(b *testing.B) {
	for _, bc := range []struct {
		ev Event
		in func(i int) Input
	}{
		{EventSessionStart, func(int) Input { return Input{SessionID: "s1", Source: "compact"} }},
		{EventUserPromptSubmit, func(int) Input { return Input{SessionID: "s1", Prompt: "go on"} }},
		{EventPostToolUse, func(i int) Input {
			return Input{SessionID: "s1", ToolName: "Edit", ToolInput: json.RawMessage(fmt.Sprintf(`{"file_path":"/w/app/f%d.go"}`, i))}
		}},
		{EventStop, func(i int) Input { return Input{SessionID: "s1", LastAssistantMessage: fmt.Sprint("turn ", i)} }},
	} {
		b.Run(string(bc.ev), func(b *testing.B) {
			h := benchHandler(b)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if res := h.Handle(ctx, bc.ev, bc.in(i)); len(res.Warnings) > 0 {
					b.Fatal(res.Warnings)
				}
				i++
			}
		})
	}
}

func BenchmarkParseInput(b *testing.B) {
	body := []byte(payloads[3].json)
	for b.Loop() {
		if _, err := ParseInput(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}
