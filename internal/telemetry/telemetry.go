// Package telemetry exports checkpoint work as OpenTelemetry traces: a span
// per checkpoint, under it a span per session, under that a span per step
// (from its start to done, failed or skipped), with decisions, blockers,
// errors, takeovers, status changes and messages as span events. The spans
// are made from the store's history, followed through its change feed, by
// the long-running process that serves the store (ckpt serve): never on the
// write path, so an agent's hook or command pays nothing for telemetry, and
// nothing is lost from the store when a collector is down (a restarted
// exporter replays each checkpoint's history and names every span as
// before).
//
// A change made under a W3C traceparent (ckpt.Event.Trace: a command or
// hook run with TRACEPARENT) joins that trace: the checkpoint created by a
// Claude Code session's hook is a child of that hook's span, and so are the
// steps its tools record, so the agent client's trace and its checkpoint's
// steps are one tree.
//
// Attributes follow the OpenTelemetry GenAI semantic conventions where they
// apply (gen_ai.agent.id, gen_ai.agent.name, gen_ai.conversation.id for the
// session); ckpt's own are under ckpt.* (docs/telemetry.md lists them).
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/buildinfo"
)

// Enabled reports whether the environment asks for trace export: the
// standard OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// is set, and OTEL_TRACES_EXPORTER is not "none".
func Enabled(getenv func(string) string) bool {
	if getenv("OTEL_TRACES_EXPORTER") == "none" || getenv("OTEL_SDK_DISABLED") == "true" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// NewProvider returns a tracer provider that batches spans to the OTLP/HTTP
// endpoint the standard OTEL_EXPORTER_OTLP_* variables configure
// (endpoint, headers, timeout, compression), asynchronously: a collector
// that is down costs a dropped batch, never a write. Shut it down to flush.
// endpoint, when not "", overrides the variables' endpoint (a full URL,
// such as http://localhost:4318/v1/traces).
func NewProvider(ctx context.Context, service, endpoint string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: OpenTelemetry exporter: %v (see the OTEL_EXPORTER_OTLP_* variables)", ckpt.ErrInvalid, err)
	}
	return newProvider(exp, service), nil
}

// newProvider is NewProvider over any span exporter.
func newProvider(exp sdktrace.SpanExporter, service string) *sdktrace.TracerProvider {
	res := resource.NewSchemaless(
		attribute.String("service.name", service),
		attribute.String("service.version", buildinfo.Read().Version),
	)
	return sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(dropReplayed{sdktrace.NewBatchSpanProcessor(exp)}),
		sdktrace.WithIDGenerator(derivedIDs{}),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
	)
}

// Exporter turns a store's history into spans. The zero value is not
// usable: use NewExporter. Run is not safe to call twice at once.
type Exporter struct {
	store  ckpt.Store
	tracer trace.Tracer
	since  time.Time
	warn   func(string)

	mu    sync.Mutex
	known map[string]*checkpointSpans
	// finished holds the next sequence number of each checkpoint whose
	// spans have all ended (its state is forgotten): a later Sync replays
	// its history up to there without exporting again.
	finished map[string]int64
}

// NewExporter returns an exporter of st's checkpoints through tp. Spans
// that end before since are not exported (the history before it is only
// replayed); warn receives what the exporter could not read (nil: dropped).
func NewExporter(st ckpt.Store, tp trace.TracerProvider, since time.Time, warn func(string)) *Exporter {
	if warn == nil {
		warn = func(string) {}
	}
	return &Exporter{store: st, tracer: tp.Tracer("github.com/ckpt-dev/ckpt"), since: since, warn: warn,
		known: map[string]*checkpointSpans{}, finished: map[string]int64{}}
}

// Run follows the store's change feed from its current end and exports the
// work of each checkpoint that changes, until ctx ends (it then returns
// nil). A store without a change feed is an error.
func (x *Exporter) Run(ctx context.Context) error {
	w, ok := ckpt.As[ckpt.Watcher](x.store)
	if !ok {
		return fmt.Errorf("%w: this store has no change feed to export from", ckpt.ErrInvalid)
	}
	err := w.Watch(ctx, ckpt.CursorNow, func(ch ckpt.Change) error {
		if ch.Kind == ckpt.ChangeEvent {
			x.Sync(ctx, ch.ID)
		}
		return nil
	})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// Sync exports what changed in checkpoint id since the exporter last
// looked: its new events, read in pages.
func (x *Exporter) Sync(ctx context.Context, id string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	cs := x.known[id]
	if cs == nil {
		cs = &checkpointSpans{id: id, nextSeq: 1, replayTo: x.finished[id], steps: map[string]trace.Span{}}
		x.known[id] = cs
	}
	for {
		events, err := x.store.History(ctx, id, cs.nextSeq, 500)
		if err != nil {
			x.warn(fmt.Sprintf("telemetry: reading the history of %s: %v", id, err))
			return
		}
		for _, e := range events {
			x.apply(ctx, cs, e)
		}
		if len(events) < 500 {
			break
		}
	}
	if cs.root == nil && cs.session == nil {
		// Finished: nothing open to remember but how far it was exported.
		delete(x.known, id)
		x.finished[id] = cs.nextSeq
	}
}

// dropAttr marks a span that ended before the exporter started.
const dropAttr = "ckpt.telemetry.replayed"

// dropReplayed is a span processor that passes on every span but those
// marked with dropAttr.
type dropReplayed struct{ sdktrace.SpanProcessor }

func (d dropReplayed) OnEnd(s sdktrace.ReadOnlySpan) {
	for _, kv := range s.Attributes() {
		if kv.Key == dropAttr {
			return
		}
	}
	d.SpanProcessor.OnEnd(s)
}

// idsKey carries the IDs the next span started under a context must get.
type idsKey struct{}

type wantedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// withIDs makes the next span started under ctx get these IDs (derivedIDs).
func withIDs(ctx context.Context, t trace.TraceID, s trace.SpanID) context.Context {
	return context.WithValue(ctx, idsKey{}, wantedIDs{t, s})
}

// derivedIDs gives a span the IDs its context asks for (withIDs), so a
// checkpoint's, session's and step's spans are named the same by every
// exporter that replays the history; spans of other code get random ones.
type derivedIDs struct{}

func (derivedIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if w, ok := ctx.Value(idsKey{}).(wantedIDs); ok {
		return w.trace, w.span
	}
	return randomIDs()
}

func (derivedIDs) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if w, ok := ctx.Value(idsKey{}).(wantedIDs); ok {
		return w.span
	}
	_, s := randomIDs()
	return s
}
