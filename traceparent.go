package ckpt

import "encoding/hex"

// TraceContext is the part of a W3C traceparent that telemetry uses: the
// trace and the caller's span in it.
type TraceContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	Sampled bool
}

// ParseTraceparent reads a W3C Trace Context traceparent header value
// ("00-<32 hex trace ID>-<16 hex span ID>-<2 hex flags>"), as a client
// hands it to the commands it runs in TRACEPARENT. ok is false for anything
// else, an all-zero trace or span ID included: a bad value is ignored, never
// an error (telemetry must not fail a write).
func ParseTraceparent(s string) (tc TraceContext, ok bool) {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return TraceContext{}, false
	}
	var version, flags [1]byte
	if !lowerHex(s[0:2], version[:]) || version[0] == 0xff ||
		!lowerHex(s[3:35], tc.TraceID[:]) || !lowerHex(s[36:52], tc.SpanID[:]) || !lowerHex(s[53:55], flags[:]) {
		return TraceContext{}, false
	}
	if tc.TraceID == [16]byte{} || tc.SpanID == [8]byte{} {
		return TraceContext{}, false
	}
	tc.Sampled = flags[0]&1 == 1
	return tc, true
}

// String writes tc as a version-00 traceparent.
func (tc TraceContext) String() string {
	flags := "00"
	if tc.Sampled {
		flags = "01"
	}
	return "00-" + hex.EncodeToString(tc.TraceID[:]) + "-" + hex.EncodeToString(tc.SpanID[:]) + "-" + flags
}

// lowerHex decodes s, lower-case hex only (as the specification requires),
// into dst.
func lowerHex(s string, dst []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}
