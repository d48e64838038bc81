package cli

import (
	"context"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

// EnvTraceparent is the W3C trace context a client hands the commands it
// runs (Claude Code sets it for its hooks and tools when it exports
// traces). Every event this process writes records it (ckpt.Event.Trace),
// so telemetry joins the caller's trace; exporting is ckpt serve's job, off
// the write path.
const EnvTraceparent = "TRACEPARENT"

// wrapStore is every store a command opens: its seed-format mirrors, then
// the caller's trace stamped on each event.
func wrapStore(f *cmdutil.Factory, st ckpt.Store) ckpt.Store {
	return traceStamped(f, withMirrors(f, st))
}

// traceStamped stamps TRACEPARENT, when it is a valid traceparent, on
// every event appended through st that carries no trace of its own.
func traceStamped(f *cmdutil.Factory, st ckpt.Store) ckpt.Store {
	tp := f.Env.Var(EnvTraceparent)
	if tp == "" {
		return st
	}
	if _, ok := ckpt.ParseTraceparent(tp); !ok {
		return st // a bad value is ignored: telemetry never fails a write
	}
	return &tracedStore{Store: st, trace: tp}
}

// tracedStore is a store whose appends record the caller's trace.
type tracedStore struct {
	ckpt.Store
	trace string
}

// Append implements ckpt.Store.
func (s *tracedStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	if e.Trace == "" {
		e.Trace = s.trace
	}
	return s.Store.Append(ctx, id, e, opts)
}

// Unwrap returns the store it wraps (ckpt.As).
func (s *tracedStore) Unwrap() ckpt.Store { return s.Store }
