package telemetry

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/request"
	"github.com/ckpt-dev/ckpt/internal/telemetry/otlptest"
	"github.com/ckpt-dev/ckpt/memstore"
)

// The work of a checkpoint made under a Claude Code traceparent arrives at
// a real OTLP receiver as one tree in the caller's trace: the checkpoint's
// span a child of the hook's span, the session under it, each step under
// the session (or under the tool call that ran it), the decision and the
// blocker as the session's events, with the GenAI and ckpt attributes.
func TestExportedSpansJoinTheCallersTrace(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	ctx := context.Background()
	tp, err := NewProvider(ctx, "ckpt-test", "")
	if err != nil {
		t.Fatal(err)
	}
	st := memstore.New()
	t0 := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	x := NewExporter(st, tp, t0, func(msg string) { t.Error(msg) })

	const hook = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const tool = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"
	write := func(at time.Duration, r request.Request, traceparent string) {
		t.Helper()
		e, err := request.NewEvent(r, request.Write{At: t0.Add(at), Actor: ckpt.Actor{Agent: "claude-code", Session: "sess-1"}})
		if err != nil {
			t.Fatal(err)
		}
		e.Trace = traceparent
		if _, err := st.Append(ctx, "proj/session-1", e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		x.Sync(ctx, "proj/session-1")
	}
	write(0, request.Start{Title: "Add a retry budget", Agent: ckpt.Agent{ID: "claude-code", Name: "Claude Code"}, Session: "sess-1",
		Steps: []ckpt.Step{{ID: "plan", Title: "Plan the budget"}, {ID: "impl", Title: "Implement it"}}}, hook)
	write(time.Second, request.Step{Step: "plan", Status: ckpt.StepInProgress}, tool)
	write(2*time.Second, request.Decision{Text: "Budget per host", Reason: "hosts fail alone"}, "")
	write(3*time.Second, request.Step{Step: "plan", Status: ckpt.StepDone}, "")
	write(4*time.Second, request.Step{Step: "impl", Status: ckpt.StepInProgress}, "")
	write(5*time.Second, request.Block{Text: "Waiting for the API key"}, "")
	write(6*time.Second, request.Step{Step: "impl", Status: ckpt.StepFailed}, "")
	write(7*time.Second, request.Status{Status: ckpt.StatusDone}, "")
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}

	roots, sessions := rcv.Spans("ckpt.checkpoint"), rcv.Spans("ckpt.session")
	plan, impl := rcv.Spans("ckpt.step Plan the budget"), rcv.Spans("ckpt.step Implement it")
	if len(roots) != 1 || len(sessions) != 1 || len(plan) != 1 || len(impl) != 1 {
		t.Fatalf("spans: %d checkpoint, %d session, %d plan, %d impl; want one each", len(roots), len(sessions), len(plan), len(impl))
	}
	root, session := roots[0], sessions[0]
	wantTrace := "4bf92f3577b34da6a3ce929d0e0e4736"
	for _, s := range []*tracepb.Span{root, session, plan[0], impl[0]} {
		if got := hex.EncodeToString(s.TraceId); got != wantTrace {
			t.Errorf("%s is in trace %s, want the caller's %s", s.Name, got, wantTrace)
		}
	}
	if got := hex.EncodeToString(root.ParentSpanId); got != "00f067aa0ba902b7" {
		t.Errorf("the checkpoint's span has parent %s, want the hook's span", got)
	}
	if string(session.ParentSpanId) != string(root.SpanId) {
		t.Error("the session's span is not the checkpoint's child")
	}
	if got := hex.EncodeToString(plan[0].ParentSpanId); got != "1111111111111111" {
		t.Errorf("the step started under a tool's traceparent has parent %s, want the tool's span", got)
	}
	if string(impl[0].ParentSpanId) != string(session.SpanId) {
		t.Error("a step started without a traceparent is not the session's child")
	}
	if d := time.Duration(plan[0].EndTimeUnixNano - plan[0].StartTimeUnixNano); d != 2*time.Second {
		t.Errorf("the plan step spans %s, want its 2s from start to done", d)
	}
	if impl[0].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || otlptest.Attr(impl[0], "ckpt.step.status") != "failed" {
		t.Errorf("the failed step: status %v, ckpt.step.status %q", impl[0].Status, otlptest.Attr(impl[0], "ckpt.step.status"))
	}
	if otlptest.Attr(root, "ckpt.checkpoint.id") != "proj/session-1" || otlptest.Attr(root, "gen_ai.agent.name") != "Claude Code" || otlptest.Attr(root, "ckpt.status") != "done" {
		t.Errorf("checkpoint attributes: %v", root.Attributes)
	}
	if otlptest.Attr(session, "gen_ai.conversation.id") != "sess-1" {
		t.Errorf("session attributes: %v", session.Attributes)
	}
	var names []string
	for _, ev := range session.Events {
		names = append(names, ev.Name)
	}
	if len(names) < 2 || names[0] != "ckpt.decision" || names[1] != "ckpt.blocker" {
		t.Errorf("session events %v, want the decision then the blocker", names)
	}
	if rcv.Resource("service.name") != "ckpt-test" {
		t.Errorf("resource %v", rcv.Resource("service.name"))
	}
}

// A restarted exporter replays a history to know when open work began, and
// exports only spans that end after it started: nothing twice.
func TestReplayedHistoryIsNotExportedTwice(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	ctx := context.Background()
	st := memstore.New()
	t0 := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	for i, r := range []request.Request{
		request.Start{Title: "Job", Steps: []ckpt.Step{{ID: "a"}, {ID: "b"}}},
		request.Step{Step: "a", Status: ckpt.StepDone}, // ended before the exporter
		request.Step{Step: "b", Status: ckpt.StepInProgress},
	} {
		if _, err := request.Append(ctx, st, "job", r, request.Write{At: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	tp, err := NewProvider(ctx, "ckpt", "")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExporter(st, tp, t0.Add(10*time.Minute), nil)
	x.Sync(ctx, "job")
	if _, err := request.Append(ctx, st, "job", request.Step{Step: "b", Status: ckpt.StepDone}, request.Write{At: t0.Add(20 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	x.Sync(ctx, "job")
	tp.Shutdown(ctx)
	if a := rcv.Spans("ckpt.step a"); len(a) != 0 {
		t.Errorf("step a ended before the exporter started and was exported: %d spans", len(a))
	}
	b := rcv.Spans("ckpt.step b")
	if len(b) != 1 || time.Unix(0, int64(b[0].StartTimeUnixNano)).UTC() != t0.Add(2*time.Minute) {
		t.Fatalf("step b: %v; want one span from its start in the replayed history", b)
	}
}

// The feed tells the exporter of each change, but a Sync reads every event
// already written: one Sync can see the whole history up to done, and the
// change notices still queued for the same checkpoint must export nothing
// again (ckpt serve exported the finished checkpoint twice when a busy
// feed delivered its last changes after the history already held them).
func TestAFinishedCheckpointIsExportedOnce(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	ctx := context.Background()
	st := memstore.New()
	t0 := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	tp, err := NewProvider(ctx, "ckpt", "")
	if err != nil {
		t.Fatal(err)
	}
	x := NewExporter(st, tp, t0, func(msg string) { t.Error(msg) })
	for i, r := range []request.Request{
		request.Start{Title: "Job", Steps: []ckpt.Step{{ID: "a", Title: "Step A"}}},
		request.Step{Step: "a", Status: ckpt.StepInProgress},
		request.Step{Step: "a", Status: ckpt.StepDone},
		request.Status{Status: ckpt.StatusDone},
	} {
		if _, err := request.Append(ctx, st, "job", r, request.Write{At: t0.Add(time.Duration(i+1) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 { // one notice per change, the first Sync reading all four
		x.Sync(ctx, "job")
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if roots, steps := rcv.Spans("ckpt.checkpoint"), rcv.Spans("ckpt.step Step A"); len(roots) != 1 || len(steps) != 1 {
		t.Fatalf("%d checkpoint and %d step spans, want 1 each", len(roots), len(steps))
	}
}
