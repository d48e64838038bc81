package telemetry

import (
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Middleware makes a server span of each request ckpt serve answers (a
// change-feed or dashboard stream's span lasts as long as the stream), a
// child of the caller's span when the request carries a traceparent header,
// and answers with the span's own traceparent. A request that fails with a
// 5xx is logged with its trace ID, so a log line leads to its trace.
func Middleware(tp trace.TracerProvider, log *slog.Logger) func(http.Handler) http.Handler {
	tracer := tp.Tracer("github.com/ckpt-dev/ckpt/server")
	prop := propagation.TraceContext{}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
			ctx, span := tracer.Start(ctx, r.Method+" "+route(r.URL.Path), trace.WithSpanKind(trace.SpanKindServer),
				trace.WithAttributes(
					attribute.String("http.request.method", r.Method),
					attribute.String("url.path", r.URL.Path),
					attribute.String("http.route", route(r.URL.Path)),
				))
			defer span.End()
			prop.Inject(ctx, propagation.HeaderCarrier(w.Header()))
			sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(sw, r.WithContext(ctx))
			span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
			if sw.status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(sw.status))
				if log != nil {
					log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", sw.status, "trace_id", span.SpanContext().TraceID().String())
				}
			}
		})
	}
}

// route is a request path with its checkpoint ID left out, so that span
// names stay few: /v1/checkpoints/kai-7/secondary-a is /v1/checkpoints/{id}.
func route(path string) string {
	if rest, ok := strings.CutPrefix(path, "/v1/lifecycle/"); ok {
		verb, _, _ := strings.Cut(rest, "/")
		return "/v1/lifecycle/" + verb + "/{id}"
	}
	for _, p := range []string{"/v1/checkpoints/", "/v1/events/", "/v1/beats/", "/v1/tell/", "/c/"} {
		if strings.HasPrefix(path, p) && len(path) > len(p) {
			return p + "{id}"
		}
	}
	return path
}

// statusWriter remembers the status a handler answered with. It passes
// Flush through (a change-feed stream flushes each event) and unwraps for
// http.ResponseController.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
