package telemetry

import (
	"crypto/rand"

	"go.opentelemetry.io/otel/trace"
)

// randomIDs are fresh IDs for spans that ask for none (the server's
// request spans).
func randomIDs() (t trace.TraceID, s trace.SpanID) {
	_, _ = rand.Read(t[:])
	_, _ = rand.Read(s[:])
	return t, s
}
