package telemetry

import (
	"context"
	"crypto/sha256"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	ckpt "github.com/ckpt-dev/ckpt"
)

// checkpointSpans is what the exporter keeps of one checkpoint: its state
// folded so far and the spans still open (the checkpoint's, the current
// session's, each running step's). Span IDs are derived from the
// checkpoint, session and step, so a restarted exporter that replays a
// history names every span as before.
type checkpointSpans struct {
	id      string
	state   *ckpt.Checkpoint
	nextSeq int64
	// replayTo: the events before this sequence number were exported
	// before (the checkpoint finished and was forgotten); their spans are
	// replayed, not exported again. replaying is set while applying one.
	replayTo  int64
	replaying bool
	traceID   trace.TraceID
	root      trace.Span
	session   trace.Span
	steps     map[string]trace.Span
}

// apply folds e into the checkpoint and opens, annotates and ends spans for
// what changed. Spans that end before since are dropped: the history
// before the exporter started is replayed only to know when open work
// began.
func (x *Exporter) apply(ctx context.Context, cs *checkpointSpans, e ckpt.Event) {
	before := cs.state
	var work *ckpt.Checkpoint
	if before != nil {
		work = before.Clone() // Apply changes its argument in place
	}
	after, err := ckpt.Apply(cs.id, work, e)
	if err != nil {
		cs.nextSeq = e.Seq + 1 // a stored event the fold refuses changed nothing
		return
	}
	cs.state, cs.nextSeq, cs.replaying = after, e.Seq+1, e.Seq < cs.replayTo
	if cs.root == nil {
		x.openRoot(ctx, cs, e)
	}
	if before == nil || before.Session.ID != after.Session.ID {
		x.endSession(cs, e.At)
		x.openSession(ctx, cs, e)
	}
	x.stepSpans(ctx, cs, before, e)
	x.annotate(cs, e)
	switch {
	case after.Archived != nil, after.Status == ckpt.StatusDone, after.Status == ckpt.StatusFailed, after.Status == ckpt.StatusAbandoned:
		x.endAll(cs, e.At)
	}
}

// openRoot starts the checkpoint's span at its first event: in the trace
// of the call that created it when that call ran under a traceparent (a
// Claude Code session's hook), as that call's child; else as the root of a
// trace of its own.
func (x *Exporter) openRoot(ctx context.Context, cs *checkpointSpans, e ckpt.Event) {
	parent, joined := callerContext(e.Trace)
	cs.traceID = trace.TraceID(derive("trace", cs.id))
	if joined {
		cs.traceID = parent.TraceID()
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	ctx = withIDs(ctx, cs.traceID, spanID("checkpoint", cs.id))
	c := cs.state
	_, cs.root = x.tracer.Start(ctx, "ckpt.checkpoint", trace.WithTimestamp(e.At),
		trace.WithAttributes(
			attribute.String("ckpt.checkpoint.id", cs.id),
			attribute.String("ckpt.checkpoint.title", c.Title),
			attribute.String("ckpt.checkpoint.parent", c.Parent),
			attribute.String("gen_ai.agent.id", c.Agent.ID),
			attribute.String("gen_ai.agent.name", agentName(c.Agent)),
		))
}

// openSession starts the span of the checkpoint's current session, a child
// of the checkpoint's span.
func (x *Exporter) openSession(ctx context.Context, cs *checkpointSpans, e ckpt.Event) {
	c := cs.state
	ctx = trace.ContextWithSpan(withIDs(ctx, cs.traceID, spanID("session", cs.id, c.Session.ID)), cs.root)
	_, cs.session = x.tracer.Start(ctx, "ckpt.session", trace.WithTimestamp(e.At),
		trace.WithAttributes(
			attribute.String("ckpt.checkpoint.id", cs.id),
			attribute.String("gen_ai.conversation.id", c.Session.ID),
			attribute.Int("ckpt.session.number", c.Session.Number),
			attribute.String("gen_ai.agent.id", c.Agent.ID),
			attribute.String("gen_ai.agent.name", agentName(c.Agent)),
		))
}

// stepSpans opens a span for each step that started with e and ends the
// span of each step e finished. A step that finishes without having been
// seen running spans from e to e. A step started under a traceparent of the
// checkpoint's own trace is the caller's child: the hook or command that
// ran it, in the agent client's tree.
func (x *Exporter) stepSpans(ctx context.Context, cs *checkpointSpans, before *ckpt.Checkpoint, e ckpt.Event) {
	for _, st := range cs.state.Steps {
		was := ckpt.StepPending
		if before != nil {
			if i := before.StepIndex(st.ID); i >= 0 {
				was = before.Steps[i].Status
			}
		}
		if was == st.Status {
			continue
		}
		if st.Status == ckpt.StepInProgress || st.Status.Finished() || st.Status == ckpt.StepFailed {
			if cs.steps[st.ID] == nil {
				cs.steps[st.ID] = x.openStep(ctx, cs, st, e)
			}
		}
		if span := cs.steps[st.ID]; span != nil && (st.Status.Finished() || st.Status == ckpt.StepFailed) {
			span.SetAttributes(attribute.String("ckpt.step.status", string(st.Status)), attribute.String("ckpt.step.by", st.By), attribute.String("ckpt.step.output", st.Output))
			if st.Status == ckpt.StepFailed {
				span.SetStatus(codes.Error, "step failed")
			}
			x.end(cs, span, e.At)
			delete(cs.steps, st.ID)
		}
	}
}

func (x *Exporter) openStep(ctx context.Context, cs *checkpointSpans, st ckpt.Step, e ckpt.Event) trace.Span {
	parent := cs.session
	ctx = withIDs(ctx, cs.traceID, spanID("step", cs.id, cs.state.Session.ID, st.ID, strconv.FormatInt(e.Seq, 10)))
	var opts []trace.SpanStartOption
	if caller, ok := callerContext(e.Trace); ok && caller.TraceID() == cs.traceID {
		ctx = trace.ContextWithRemoteSpanContext(ctx, caller)
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: parent.SpanContext()}))
	} else {
		ctx = trace.ContextWithSpan(ctx, parent)
		if ok {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: caller}))
		}
	}
	name := st.Title
	if name == "" {
		name = st.ID
	}
	opts = append(opts, trace.WithTimestamp(e.At), trace.WithAttributes(
		attribute.String("ckpt.checkpoint.id", cs.id),
		attribute.String("ckpt.step.id", st.ID),
		attribute.String("ckpt.step.phase", st.Phase),
		attribute.String("gen_ai.conversation.id", cs.state.Session.ID),
	))
	_, span := x.tracer.Start(ctx, "ckpt.step "+name, opts...)
	return span
}

// annotate adds e to the current session's span as an event when it says
// something an operator follows: a decision, a blocker, an error, a
// takeover or restart, a status change (waiting, blocked, …), a message.
func (x *Exporter) annotate(cs *checkpointSpans, e ckpt.Event) {
	if cs.session == nil {
		return
	}
	var attrs []attribute.KeyValue
	switch e.Type {
	case ckpt.EventDecision, ckpt.EventBlocker, ckpt.EventError, ckpt.EventTakenOver, ckpt.EventRestarted,
		ckpt.EventStatus, ckpt.EventTold, ckpt.EventDelivered, ckpt.EventRestored, ckpt.EventAccept, ckpt.EventCycle:
	default:
		return
	}
	attrs = append(attrs,
		attribute.Int64("ckpt.rev", e.Seq),
		attribute.String("ckpt.actor", e.Actor.Agent),
		attribute.String("ckpt.status", string(cs.state.Status)),
		attribute.String("ckpt.event.data", truncate(string(e.Data), 1024)),
	)
	cs.session.AddEvent("ckpt."+string(e.Type), trace.WithTimestamp(e.At), trace.WithAttributes(attrs...))
	if e.Type == ckpt.EventError {
		cs.session.SetStatus(codes.Error, "an error was recorded")
	}
}

// endSession ends the current session's span (a new session began, or the
// work finished).
func (x *Exporter) endSession(cs *checkpointSpans, at time.Time) {
	if cs.session == nil {
		return
	}
	for id, span := range cs.steps {
		span.SetAttributes(attribute.String("ckpt.step.status", "unfinished"))
		x.end(cs, span, at)
		delete(cs.steps, id)
	}
	x.end(cs, cs.session, at)
	cs.session = nil
}

// endAll ends every open span of the checkpoint: its work is finished.
func (x *Exporter) endAll(cs *checkpointSpans, at time.Time) {
	x.endSession(cs, at)
	if cs.root != nil {
		cs.root.SetAttributes(attribute.String("ckpt.status", string(cs.state.Status)))
		if cs.state.Status == ckpt.StatusFailed {
			cs.root.SetStatus(codes.Error, cs.state.StatusReason)
		}
		x.end(cs, cs.root, at)
		cs.root = nil
	}
}

// end ends span at at. A span that ends before the exporter started, or
// at an event it exported before, is dropped instead: that part of the
// history was replayed only to know when open work began.
func (x *Exporter) end(cs *checkpointSpans, span trace.Span, at time.Time) {
	if at.Before(x.since) || cs.replaying {
		span.SetAttributes(attribute.Bool(dropAttr, true))
	}
	span.End(trace.WithTimestamp(at))
}

// callerContext is the span context of the call that made an event, from
// its recorded traceparent.
func callerContext(traceparent string) (trace.SpanContext, bool) {
	tc, ok := ckpt.ParseTraceparent(traceparent)
	if !ok {
		return trace.SpanContext{}, false
	}
	flags := trace.TraceFlags(0)
	if tc.Sampled {
		flags = trace.FlagsSampled
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tc.TraceID, SpanID: tc.SpanID, TraceFlags: flags, Remote: true}), true
}

// derive hashes parts into 16 bytes: a stable ID for the same parts.
func derive(parts ...string) [16]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

func spanID(parts ...string) trace.SpanID {
	d := derive(parts...)
	var s trace.SpanID
	copy(s[:], d[:8])
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// agentName is gen_ai.agent.name: the agent's human-readable name, else
// its ID.
func agentName(a ckpt.Agent) string {
	if a.Name != "" {
		return a.Name
	}
	return a.ID
}
