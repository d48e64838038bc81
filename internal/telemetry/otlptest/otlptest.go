// Package otlptest is an OTLP/HTTP trace receiver for tests, in the manner
// of net/http/httptest: it decodes each export request's protobuf body as a
// collector does and keeps the spans.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Receiver is a running receiver; Close it when done.
type Receiver struct {
	*httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource map[string]string
}

// NewReceiver starts a receiver on a loopback port; its URL is the
// endpoint to export to (OTEL_EXPORTER_OTLP_ENDPOINT).
func NewReceiver() *Receiver {
	r := &Receiver{resource: map[string]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(req.Body)
	var msg coltrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range msg.ResourceSpans {
		for _, kv := range rs.Resource.GetAttributes() {
			r.resource[kv.Key] = kv.Value.GetStringValue()
		}
		for _, ss := range rs.ScopeSpans {
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// Spans returns the spans received so far called name ("" for all).
func (r *Receiver) Spans(name string) []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range r.spans {
		if name == "" || s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Resource returns the resource attributes of the last export.
func (r *Receiver) Resource(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.resource[key]
}

// Attr is the string value of a span's attribute, "" when it has none.
func Attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}
