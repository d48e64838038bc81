package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

type fixture struct {
	store ckpt.Store
	clock *testClock
	cs    *sdk.ClientSession
}

// connect serves a new server over the SDK's in-memory transport and
// returns a connected client session.
func connect(t *testing.T) *fixture {
	t.Helper()
	return connectTo(t, memstore.New())
}

// connectTo is connect over the given store.
func connectTo(t *testing.T, store ckpt.Store) *fixture {
	t.Helper()
	f := &fixture{store: store, clock: &testClock{now: t0}}
	srv := NewServer(f.store, Options{Now: f.clock.Now, Version: "test", Agent: "tester", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	f.cs = cs
	return f
}

// call calls a tool; a protocol error fails the test.
func (f *fixture) call(t *testing.T, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := f.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", name, args, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ok calls a tool that must succeed and decodes its structured result.
func ok[T any](t *testing.T, f *fixture, name string, args any) T {
	t.Helper()
	res := f.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", name, args, text(res))
	}
	var out T
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: decoding %s: %v", name, b, err)
	}
	return out
}

// fails calls a tool that must fail with a tool error containing want.
func fails(t *testing.T, f *fixture, name string, args any, want string) {
	t.Helper()
	res := f.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded, want an error with %q", name, args, want)
	}
	if !strings.Contains(text(res), want) {
		t.Fatalf("%s(%v) error %q, want it to contain %q", name, args, text(res), want)
	}
}

func (f *fixture) get(t *testing.T, id string) *ckpt.Checkpoint {
	t.Helper()
	c, err := f.store.Get(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestToolsAreListedWithDocumentedSchemas(t *testing.T) {
	f := connect(t)
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil {
			t.Errorf("%s: description %q, output schema %v", tool.Name, tool.Description, tool.OutputSchema)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		json.Unmarshal(b, &schema)
		for prop, p := range schema.Properties {
			if p.Description == "" {
				t.Errorf("%s: argument %s has no description", tool.Name, prop)
			}
		}
	}
	slices.Sort(names)
	want := slices.Clone(ToolNames)
	slices.Sort(want)
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
}

func TestStartAndShow(t *testing.T) {
	f := connect(t)
	out := ok[StateOutput](t, f, "ckpt_start", map[string]any{
		"id": "kai-7/secondary-a", "title": "Schedule fetcher spec", "agent": "Secondary-A", "agent_type": "secondary",
		"steps": []map[string]string{{"id": "research"}, {"id": "spec", "title": "Write the spec"}}, "interval": "5m", "labels": []string{"kai-7"},
	})
	if out.ID != "kai-7/secondary-a" || out.Rev != 1 || out.Checkpoint["title"] != "Schedule fetcher spec" {
		t.Errorf("start returned %+v", out)
	}
	c := f.get(t, "kai-7/secondary-a")
	if c.Agent != (ckpt.Agent{ID: "Secondary-A", Type: "secondary"}) || len(c.Steps) != 2 || c.Steps[1].Title != "Write the spec" ||
		c.Heartbeat.Interval.D() != 5*time.Minute || c.Session.Number != 1 || c.Session.ID == "" || !slices.Equal(c.Labels, []string{"kai-7"}) {
		t.Errorf("stored %+v", c)
	}
	hist, _ := f.store.History(context.Background(), "kai-7/secondary-a", 1, 0)
	if hist[0].Actor.Agent != "Secondary-A" || !hist[0].At.Equal(t0) {
		t.Errorf("event actor %+v at %v", hist[0].Actor, hist[0].At)
	}

	f.clock.Set(t0.Add(time.Minute))
	show := ok[ShowOutput](t, f, "ckpt_show", map[string]any{"id": "kai-7/secondary-a"})
	if show.Rev != 1 || show.Liveness != "live" || show.SilentSeconds != 60 || !show.LastSeen.Equal(t0) {
		t.Errorf("show %+v", show)
	}
	want, _ := json.Marshal(c)
	got, _ := json.Marshal(show.Checkpoint)
	if d := cmp.Diff(decode(t, want), decode(t, got)); d != "" {
		t.Errorf("shown state (-store +tool):\n%s", d)
	}

	fails(t, f, "ckpt_start", map[string]any{"id": "kai-7/secondary-a"}, "already exists: kai-7/secondary-a (revision 1) [exists] (use another id, or continue the existing work with ckpt_resume)")
	fails(t, f, "ckpt_start", map[string]any{"id": "x", "steps": []map[string]string{{"id": "a"}, {"id": "a"}}}, `step id "a" is given twice`)
	fails(t, f, "ckpt_start", map[string]any{"id": "x", "steps": []map[string]string{{"id": " "}}}, "step id: a step has no ID")
	fails(t, f, "ckpt_start", map[string]any{"id": "x", "interval": "soon"}, `interval "soon"`)
	fails(t, f, "ckpt_show", map[string]any{"id": "nope"}, "not found")
	fails(t, f, "ckpt_show", map[string]any{"id": "kai-7/secondary-a", "rev": 9}, "not found")
	if _, err := f.store.Get(context.Background(), "x", 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("a refused start stored something: %v", err)
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestUpdateWithCASAndKeys(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "job"})
	out := ok[StateOutput](t, f, "ckpt_update", map[string]any{
		"id": "job", "if_rev": 1, "stage": "S2.P2", "current_step": "Writing acceptance criteria", "status": "PAUSED", "status_reason": "waiting for review",
		"files_modified": []string{"feature_02/spec.md"}, "next_steps": []string{"Write checklist.md"}, "meta": map[string]any{"ticket": "CIA-1", "n": 2},
		"progress": map[string]int{"done": 1, "total": 4}, "interval": "10m", "resumable": true, "add_labels": []string{"x"},
	})
	c := f.get(t, "job")
	if out.Rev != 2 || c.Stage != "S2.P2" || c.CurrentStep != "Writing acceptance criteria" || c.Status != ckpt.StatusWaiting || c.StatusReason != "waiting for review" ||
		!slices.Equal(c.Files.Modified, []string{"feature_02/spec.md"}) || !slices.Equal(c.Resume.NextSteps, []string{"Write checklist.md"}) ||
		string(c.Meta["ticket"]) != `"CIA-1"` || string(c.Meta["n"]) != "2" || c.Progress.Done != 1 || c.Progress.Total != 4 || c.Heartbeat.Interval.D() != 10*time.Minute {
		t.Errorf("after update: %+v", c)
	}

	// A stale if_rev is refused and writes nothing.
	fails(t, f, "ckpt_update", map[string]any{"id": "job", "if_rev": 1, "stage": "S3"}, "revision conflict: job is at revision 2, not 1")
	fails(t, f, "ckpt_update", map[string]any{"id": "job", "if_rev": 1, "stage": "S3"}, "retry with if_rev 2")
	// The library's text is kept as it is, with its stable code; the hint
	// names tool arguments, never CLI flags.
	fails(t, f, "ckpt_update", map[string]any{"id": "job", "if_rev": 1, "stage": "S3"}, "someone else wrote first [conflict] (read it again with ckpt_show")
	if res := f.call(t, "ckpt_update", map[string]any{"id": "job", "if_rev": 1, "stage": "S3"}); strings.Contains(text(res), "--") || strings.Contains(text(res), "ckpt show") {
		t.Errorf("a tool error speaks the CLI's words: %q", text(res))
	}
	if c := f.get(t, "job"); c.Rev != 2 || c.Stage != "S2.P2" {
		t.Errorf("a conflicting update wrote: rev %d stage %s", c.Rev, c.Stage)
	}

	// A repeated key writes once.
	first := ok[StateOutput](t, f, "ckpt_update", map[string]any{"id": "job", "key": "k1", "meta": map[string]any{"ticket": nil}})
	again := ok[StateOutput](t, f, "ckpt_update", map[string]any{"id": "job", "key": "k1", "stage": "ignored"})
	if first.Rev != 3 || first.Replayed || again.Rev != 3 || !again.Replayed {
		t.Errorf("keyed updates: %d/%v then %d/%v", first.Rev, first.Replayed, again.Rev, again.Replayed)
	}
	if c := f.get(t, "job"); c.Rev != 3 || c.Meta["ticket"] != nil || c.Stage != "S2.P2" {
		t.Errorf("after keyed updates: rev %d meta %v stage %s", c.Rev, c.Meta, c.Stage)
	}

	fails(t, f, "ckpt_update", map[string]any{"id": "job"}, "nothing to update")
	fails(t, f, "ckpt_update", map[string]any{"id": "job", "status": "sleeping"}, `unknown status "sleeping"`)
	fails(t, f, "ckpt_update", map[string]any{"id": "job", "progress": map[string]int{"done": 5, "total": 4}}, "progress 5/4")
	fails(t, f, "ckpt_update", map[string]any{"id": "job", "if_rev": -1, "stage": "x"}, "if_rev -1 is negative")
	fails(t, f, "ckpt_update", map[string]any{"id": "ghost", "stage": "x"}, "ckpt_start creates one")
	if c := f.get(t, "job"); c.Rev != 3 {
		t.Errorf("refused updates wrote: rev %d", c.Rev)
	}
}

func TestStepDecisionBlockerHeartbeat(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "job", "steps": []map[string]string{{"id": "research"}, {"id": "spec"}}})

	out := ok[StateOutput](t, f, "ckpt_step", map[string]any{"id": "job", "step": "research", "status": "started"})
	if out.Checkpoint["current_step"] != "research" {
		t.Errorf("current step %v", out.Checkpoint["current_step"])
	}
	ok[StateOutput](t, f, "ckpt_step", map[string]any{"id": "job", "step": "research", "status": "done", "output": "research/NOTES.md", "by": "main"})
	// A typo is refused with the step meant, as on the command line; add
	// adds a step.
	fails(t, f, "ckpt_step", map[string]any{"id": "job", "step": "reserch", "status": "done"}, `did you mean "research"? (to add it as a new step: call ckpt_step again with add: true)`)
	ok[StateOutput](t, f, "ckpt_step", map[string]any{"id": "job", "step": "review", "title": "Review", "status": "skipped", "add": true})
	c := f.get(t, "job")
	if c.Steps[0].Status != ckpt.StepDone || c.Steps[0].Output != "research/NOTES.md" || len(c.Steps) != 3 || c.Progress.Done != 2 || c.Progress.Total != 3 {
		t.Errorf("steps %+v progress %+v", c.Steps, c.Progress)
	}
	fails(t, f, "ckpt_step", map[string]any{"id": "job", "step": "spec", "status": "halfway"}, `step status "halfway"`)
	fails(t, f, "ckpt_step", map[string]any{"id": "job", "step": ""}, "the step ID is empty")

	ok[StateOutput](t, f, "ckpt_decision", map[string]any{"id": "job", "text": "Use the v2 API", "reason": "v1 is rate limited"})
	if c := f.get(t, "job"); len(c.Decisions) != 1 || c.Decisions[0] != (ckpt.Decision{At: t0, Text: "Use the v2 API", Reason: "v1 is rate limited"}) {
		t.Errorf("decisions %+v", c.Decisions)
	}
	fails(t, f, "ckpt_decision", map[string]any{"id": "job", "text": "  "}, "text is empty")

	out = ok[StateOutput](t, f, "ckpt_blocker", map[string]any{"id": "job", "text": "Waiting for DISCOVERY.md"})
	if out.Checkpoint["status"] != "blocked" {
		t.Errorf("status after a blocker: %v", out.Checkpoint["status"])
	}
	ok[StateOutput](t, f, "ckpt_blocker", map[string]any{"id": "job", "action": "add", "text": "No API key", "blocker_id": "key"})
	ok[StateOutput](t, f, "ckpt_blocker", map[string]any{"id": "job", "action": "clear", "blocker_id": "key"})
	if c := f.get(t, "job"); c.Status != ckpt.StatusBlocked || len(c.ActiveBlockers()) != 1 {
		t.Errorf("after clearing one: %s, %d active", c.Status, len(c.ActiveBlockers()))
	}
	out = ok[StateOutput](t, f, "ckpt_blocker", map[string]any{"id": "job", "action": "clear"})
	if out.Checkpoint["status"] != "in_progress" {
		t.Errorf("status after clearing all: %v", out.Checkpoint["status"])
	}
	fails(t, f, "ckpt_blocker", map[string]any{"id": "job", "action": "clear"}, "no active blocker")
	fails(t, f, "ckpt_blocker", map[string]any{"id": "job", "action": "add"}, "text is empty")
	fails(t, f, "ckpt_blocker", map[string]any{"id": "job", "action": "remove"}, `action "remove": use add or clear`)
	fails(t, f, "ckpt_blocker", map[string]any{"id": "job"}, "nothing to do")

	rev := f.get(t, "job").Rev
	f.clock.Set(t0.Add(time.Hour))
	hb := ok[HeartbeatOutput](t, f, "ckpt_heartbeat", map[string]any{"id": "job"})
	c = f.get(t, "job")
	if !hb.At.Equal(t0.Add(time.Hour)) || !c.Heartbeat.LastBeat.Equal(t0.Add(time.Hour)) || c.Rev != rev {
		t.Errorf("heartbeat %+v: last beat %v, rev %d (was %d)", hb, c.Heartbeat.LastBeat, c.Rev, rev)
	}
	fails(t, f, "ckpt_heartbeat", map[string]any{"id": "ghost"}, "not found")
}

func TestResumeReturnsTheContinuationPrompt(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "job", "title": "Ship it", "steps": []map[string]string{{"id": "a"}, {"id": "b"}}})
	ok[StateOutput](t, f, "ckpt_step", map[string]any{"id": "job", "step": "a", "status": "done"})
	res := f.call(t, "ckpt_resume", map[string]any{"id": "job", "agent": "Secondary-B", "key": "r1"})
	if res.IsError {
		t.Fatal(text(res))
	}
	c := f.get(t, "job")
	want := render.NewPrompt(c).Markdown()
	if text(res) != want {
		t.Errorf("resume text\n%s\nwant the rendered prompt\n%s", text(res), want)
	}
	var out ResumeOutput
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	if out.Prompt != want || out.Session != 2 || out.SessionID != c.Session.ID || out.Rev != 3 || c.Agent.ID != "Secondary-B" {
		t.Errorf("resume %+v; checkpoint session %+v agent %+v", out, c.Session, c.Agent)
	}
	hist, _ := f.store.History(context.Background(), "job", 3, 0)
	if len(hist) != 1 || hist[0].Type != ckpt.EventResumed {
		t.Errorf("history %+v", hist)
	}
	again := ok[ResumeOutput](t, f, "ckpt_resume", map[string]any{"id": "job", "key": "r1"})
	if again.Session != 2 || f.get(t, "job").Rev != 3 {
		t.Errorf("a repeated key started another session: %+v", again)
	}

	ok[StateOutput](t, f, "ckpt_update", map[string]any{"id": "job", "status": "done"})
	fails(t, f, "ckpt_resume", map[string]any{"id": "job"}, "set force to true")
	if out := ok[ResumeOutput](t, f, "ckpt_resume", map[string]any{"id": "job", "force": true}); out.Session != 3 {
		t.Errorf("forced resume: %+v", out)
	}
	fails(t, f, "ckpt_resume", map[string]any{"id": "ghost"}, "not found")
}

func TestListAndStale(t *testing.T) {
	f := connect(t)
	for _, args := range []map[string]any{
		{"id": "kai-7/a", "agent": "A", "interval": "5m"},
		{"id": "kai-7/b", "agent": "B", "interval": "5m"},
		{"id": "kai-8/c", "agent": "A", "interval": "5m"},
		{"id": "kai-8/d", "agent": "D"},
	} {
		ok[StateOutput](t, f, "ckpt_start", args)
	}
	ok[StateOutput](t, f, "ckpt_update", map[string]any{"id": "kai-8/d", "status": "done"})

	list := ok[ListOutput](t, f, "ckpt_list", map[string]any{})
	if list.Count != 4 || list.Checkpoints[0].ID != "kai-7/a" || list.Checkpoints[3].Status != "done" || list.Checkpoints[3].Liveness != "-" {
		t.Errorf("list %+v", list)
	}
	ids := func(l []Summary) (out []string) {
		for _, s := range l {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(ok[ListOutput](t, f, "ckpt_list", map[string]any{"status": []string{"in_progress"}, "agent": "A"}).Checkpoints); !slices.Equal(got, []string{"kai-7/a", "kai-8/c"}) {
		t.Errorf("filtered list %v", got)
	}
	if got := ids(ok[ListOutput](t, f, "ckpt_list", map[string]any{"prefix": "kai-8/", "status": []string{"COMPLETE"}}).Checkpoints); !slices.Equal(got, []string{"kai-8/d"}) {
		t.Errorf("prefix list %v", got)
	}
	fails(t, f, "ckpt_list", map[string]any{"status": []string{"zombie"}}, `unknown status "zombie"`)

	// 5m intervals: warn after 10m, stale after 20m of silence.
	f.clock.Set(t0.Add(12 * time.Minute))
	ok[HeartbeatOutput](t, f, "ckpt_heartbeat", map[string]any{"id": "kai-7/a"})
	f.clock.Set(t0.Add(25 * time.Minute))
	ok[HeartbeatOutput](t, f, "ckpt_heartbeat", map[string]any{"id": "kai-8/c"})
	stale := ok[StaleOutput](t, f, "ckpt_stale", map[string]any{})
	type row struct{ ID, Liveness, Silent string }
	var got []row
	for _, s := range stale.Checkpoints {
		got = append(got, row{s.ID, s.Liveness, s.Silent})
	}
	// The one stale report's order (ckpt.StaleFrom, as ckpt stale): stale
	// first, then warn, each by ID.
	if d := cmp.Diff([]row{{"kai-7/b", "stale", "25m0s"}, {"kai-7/a", "warn", "13m0s"}}, got); d != "" || stale.Count != 2 {
		t.Errorf("stale (-want +got):\n%s", d)
	}
	wide := ok[StaleOutput](t, f, "ckpt_stale", map[string]any{"warn": "14m", "stale": "1h"})
	if wide.Count != 1 || wide.Checkpoints[0].ID != "kai-7/b" || wide.Checkpoints[0].Liveness != "warn" || wide.Checkpoints[0].SilentSeconds != 1500 {
		t.Errorf("with thresholds: %+v", wide)
	}
	fails(t, f, "ckpt_stale", map[string]any{"warn": "-5m"}, `warn "-5m" is not a positive duration: use a form such as 90s, 15m, 1h30m or 7d [invalid]`)
	fails(t, f, "ckpt_stale", map[string]any{"warn": "2h", "stale": "1h"}, "warn 2h is not shorter than stale 1h: give a warn threshold below the stale one")
}

func TestBadArgumentsAreToolErrorsAndWriteNothing(t *testing.T) {
	f := connect(t)
	for _, tt := range []struct {
		tool string
		args any
		want string
	}{
		{"ckpt_start", map[string]any{}, "id"},
		{"ckpt_start", map[string]any{"id": "../etc"}, `".." segment`},
		{"ckpt_start", map[string]any{"id": ""}, "checkpoint ID is empty"},
		{"ckpt_start", map[string]any{"id": strings.Repeat("x", 201)}, "limit is 200"},
		{"ckpt_start", map[string]any{"id": "a b"}, `the character ' '`},
		{"ckpt_start", map[string]any{"id": "ok", "steps": "research"}, "steps"},
		{"ckpt_start", map[string]any{"id": "ok", "colour": "red"}, "colour"},
		{"ckpt_update", map[string]any{"id": "ok", "if_rev": "one"}, "if_rev"},
		{"ckpt_step", map[string]any{"id": "ok"}, "step"},
		{"ckpt_show", map[string]any{"id": 7}, "id"},
		{"ckpt_heartbeat", map[string]any{"id": "/abs"}, "empty segment"},
		{"ckpt_resume", map[string]any{"id": "a//b"}, "empty segment"},
	} {
		fails(t, f, tt.tool, tt.args, tt.want)
	}
	if cs, err := ckpt.ListAll(context.Background(), f.store, ckpt.Filter{IncludeArchived: true}); err != nil || len(cs) != 0 {
		t.Errorf("bad calls stored %d checkpoints (%v)", len(cs), err)
	}
	// An unknown tool is a protocol error, not a crash.
	if _, err := f.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ckpt_explode"}); err == nil {
		t.Error("an unknown tool succeeded")
	}
	ok[ListOutput](t, f, "ckpt_list", map[string]any{}) // the session still works
}

func TestResources(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "kai-7/secondary-a", "title": "Spec", "steps": []map[string]string{{"id": "research"}}})
	ctx := context.Background()

	tmpls, err := f.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range tmpls.ResourceTemplates {
		uris = append(uris, rt.URITemplate+" "+rt.MIMEType)
	}
	slices.Sort(uris)
	if d := cmp.Diff([]string{"ckpt://checkpoint/{id} application/json", "ckpt://checkpoint/{id}/prompt text/markdown"}, uris); d != "" {
		t.Errorf("templates (-want +got):\n%s", d)
	}

	c := f.get(t, "kai-7/secondary-a")
	if StateURI(c.ID) != "ckpt://checkpoint/kai-7%2Fsecondary-a" {
		t.Errorf("StateURI = %s", StateURI(c.ID))
	}
	res, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: StateURI(c.ID)})
	if err != nil {
		t.Fatal(err)
	}
	// The state as ckpt show --json prints it: with its presence now.
	want, _ := json.Marshal(render.NewShown(c, true, f.clock.Now(), ckpt.Thresholds{}, process.Alive))
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" || cmp.Diff(decode(t, want), decode(t, []byte(res.Contents[0].Text))) != "" {
		t.Errorf("state resource %+v", res.Contents)
	}
	if !strings.Contains(res.Contents[0].Text, `"presence": {`) {
		t.Errorf("the state resource of live work has no presence:\n%s", res.Contents[0].Text)
	}
	res, err = f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: PromptURI(c.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/markdown" || res.Contents[0].Text != render.NewPrompt(c).Markdown() {
		t.Errorf("prompt resource %+v", res.Contents)
	}
	if f.get(t, c.ID).Rev != c.Rev {
		t.Error("reading the prompt resource wrote to the checkpoint")
	}

	for uri, want := range map[string]string{
		StateURI("kai-7/ghost"):               "not found",
		PromptURI("ghost"):                    "not found",
		"ckpt://checkpoint/..%2Fx":            "segment",
		"ckpt://checkpoint/kai-7/secondary-a": "not found", // an unencoded '/' matches no template
		"ckpt://elsewhere/x":                  "not found",
	} {
		_, err := f.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), want) {
			t.Errorf("ReadResource(%s): err = %v, want %q", uri, err, want)
		}
	}
}

// TestHTTPHandler: the handler ckpt serve mounts at /mcp serves the tools
// over streamable HTTP, and refuses a request naming a foreign host (DNS
// rebinding).
func TestHTTPHandler(t *testing.T) {
	store := memstore.New()
	srv := NewServer(store, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	hs := httptest.NewServer(HTTPHandler(srv))
	defer hs.Close()
	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ckpt_start", Arguments: map[string]any{"id": "over-http"}})
	if err != nil || res.IsError {
		t.Fatalf("ckpt_start over HTTP: %v %s", err, text(res))
	}
	if _, err := store.Get(ctx, "over-http", 0); err != nil {
		t.Error(err)
	}
	cs.Close()

	req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(`{}`))
	req.Host = "evil.example:80"
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host got %d, want 403", resp.StatusCode)
	}
}

func TestListenAddr(t *testing.T) {
	for in, want := range map[string]string{
		"":              DefaultHTTPAddr,
		"8080":          "127.0.0.1:8080",
		":8080":         "127.0.0.1:8080",
		"localhost:99":  "localhost:99",
		"0.0.0.0:8080":  "0.0.0.0:8080",
		"[::1]:8080":    "[::1]:8080",
		"127.0.0.1:0":   "127.0.0.1:0",
		"example:65535": "example:65535",
	} {
		if got, err := ListenAddr(in); err != nil || got != want {
			t.Errorf("ListenAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"host", "host:port", "1.2.3.4:99999", "a:b:c"} {
		if _, err := ListenAddr(bad); err == nil {
			t.Errorf("ListenAddr(%q) succeeded", bad)
		}
	}
}

func TestConcurrentCallsAreSerialisedPerCheckpoint(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "busy"})
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := f.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ckpt_decision", Arguments: map[string]any{"id": "busy", "text": "d"}})
			if err != nil || res.IsError {
				errs <- text(res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if c := f.get(t, "busy"); c.Rev != 41 || len(c.Decisions) != 40 {
		t.Errorf("rev %d decisions %d, want 41 and 40", c.Rev, len(c.Decisions))
	}
}

func TestInstallClaudeProject(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	orig := `{"mcpServers": {"github": {"command": "gh-mcp", "args": []}}, "other": [1, 2]}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	changed, got, err := InstallClaudeProject(dir, "/usr/local/bin/ckpt")
	if err != nil || !changed || got != path {
		t.Fatalf("InstallClaudeProject = %v, %q, %v", changed, got, err)
	}
	data, _ := os.ReadFile(path)
	want := `{"mcpServers": {"github": {"command": "gh-mcp", "args": []}, "ckpt": {"command": "/usr/local/bin/ckpt", "args": ["mcp"]}}, "other": [1, 2]}`
	if d := cmp.Diff(decode(t, []byte(want)), decode(t, data)); d != "" {
		t.Errorf(".mcp.json (-want +got):\n%s", d)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
	}
	if changed, _, err := InstallClaudeProject(dir, "/usr/local/bin/ckpt"); err != nil || changed {
		t.Errorf("second install = %v, %v", changed, err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Error("second install rewrote the file")
	}
	if changed, _, err := UninstallClaudeProject(dir); err != nil || !changed {
		t.Fatalf("uninstall = %v, %v", changed, err)
	}
	data, _ = os.ReadFile(path)
	if d := cmp.Diff(decode(t, []byte(orig)), decode(t, data)); d != "" {
		t.Errorf("after uninstall (-original +got):\n%s", d)
	}

	// A new file holds only the server; an empty project stays empty.
	fresh := t.TempDir()
	if changed, _, err := UninstallClaudeProject(fresh); err != nil || changed {
		t.Errorf("uninstall from nothing = %v, %v", changed, err)
	}
	if _, err := os.Stat(filepath.Join(fresh, ".mcp.json")); !os.IsNotExist(err) {
		t.Error("uninstall created .mcp.json")
	}
	if _, _, err := InstallClaudeProject(fresh, "ckpt"); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(filepath.Join(fresh, ".mcp.json"))
	if string(data) != "{\n  \"mcpServers\": {\n    \"ckpt\": {\n      \"args\": [\n        \"mcp\"\n      ],\n      \"command\": \"ckpt\"\n    }\n  }\n}\n" {
		t.Errorf("new .mcp.json:\n%s", data)
	}

	for _, bad := range []string{`[1]`, `{"mcpServers": [1]}`, `{"mcpServers": `, `null`} {
		d := t.TempDir()
		p := filepath.Join(d, ".mcp.json")
		os.WriteFile(p, []byte(bad), 0o644)
		if _, _, err := InstallClaudeProject(d, "ckpt"); err == nil || !strings.Contains(err.Error(), "will not overwrite") {
			t.Errorf("install over %q: err = %v", bad, err)
		}
		if data, _ := os.ReadFile(p); string(data) != bad {
			t.Errorf("%q was changed to %q", bad, data)
		}
	}
	if _, _, err := InstallClaudeProject(dir, " "); err == nil {
		t.Error("install with no command succeeded")
	}
	if d := cmp.Diff([]string{"claude", "mcp", "add", "--scope", "user", "ckpt", "--", "/bin/ckpt", "mcp"}, ClaudeAddArgs("user", "/bin/ckpt")); d != "" {
		t.Errorf("ClaudeAddArgs (-want +got):\n%s", d)
	}
}
