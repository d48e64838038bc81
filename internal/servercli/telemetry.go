package servercli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/internal/telemetry"
)

// startTelemetry switches trace export on when --otlp-endpoint or the
// standard OTEL_EXPORTER_OTLP_* variables ask for it: the store's work as
// spans (telemetry.Exporter, following the change feed) and a span per
// request. The returned function stops the exporter and flushes what is
// batched, for at most five seconds.
func (o *ServeOptions) startTelemetry(ctx context.Context, st ckpt.Store, sopts *server.Options) (stop func(), err error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if o.OTLP == "" && !telemetry.Enabled(getenv) {
		return func() {}, nil
	}
	tp, err := telemetry.NewProvider(ctx, "ckpt-server", o.OTLP)
	if err != nil {
		return nil, err
	}
	log := sopts.Logger
	if log == nil {
		log = slog.Default()
	}
	sopts.Wrap = telemetry.Middleware(tp, log)
	x := telemetry.NewExporter(st, tp, o.Now(), func(msg string) { cmdutil.PrintWarning(o.IO.ErrOut, msg) })
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := x.Run(runCtx); err != nil {
			cmdutil.PrintWarning(o.IO.ErrOut, fmt.Sprintf("telemetry: %v: no traces of the store's work are exported", err))
		}
	}()
	fmt.Fprintln(o.IO.ErrOut, "ckpt serve: exporting traces over OTLP/HTTP (docs/telemetry.md)")
	return func() {
		cancel()
		<-done
		flush, cancelFlush := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelFlush()
		_ = tp.Shutdown(flush)
	}, nil
}
