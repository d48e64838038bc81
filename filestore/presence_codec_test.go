package filestore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// FuzzPresenceCodec holds the hand-written presence codec to encoding/json:
// what appendPresence writes is json.Marshal's bytes, and a record
// decodePresence accepts reads as json.Unmarshal reads it.
func FuzzPresenceCodec(f *testing.F) {
	f.Add([]byte(`{"state":"busy","since":"2026-11-23T18:20:39.067728047Z","process":{"host":"vm","pid":2692,"start":"123456"}}`), "busy", int64(1795458039067728047), 0, "", "vm", 2692, "123456", true)
	f.Add([]byte(`{"state":"waiting","since":"2026-01-15T14:30:00+02:00","reason":"permission prompt"}`), "waiting", int64(0), 7200, "Claude needs your permission to use Bash", "", 0, "", false)
	f.Add([]byte(`{}`), "", int64(-62135596800000000000/1e9), 1, "<&>", "h\u2028", -1, "x\"y", true)
	f.Add([]byte(`{"state":"ended","since":"0001-01-01T00:00:00Z"}`), "ended", int64(253402300800000000), 0, "\xff", "é", 1<<40, "", true)
	f.Add([]byte(`{"process":{"host":"a","pid":-0}}`), "", int64(1), 59, "", "", 0, "", false)
	f.Fuzz(func(t *testing.T, raw []byte, state string, since int64, offset int, reason, host string, pid int, start string, hasProcess bool) {
		if got, ok := decodePresence(raw); ok {
			var want ckpt.Presence
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("decodePresence(%q) accepted what encoding/json refuses: %v", raw, err)
			}
			if !samePresence(got, want) || got.Since.Format(time.RFC3339Nano) != want.Since.Format(time.RFC3339Nano) {
				t.Fatalf("decodePresence(%q) = %+v; encoding/json reads %+v", raw, got, want)
			}
		}
		p := ckpt.Presence{State: ckpt.PresenceState(state), Reason: reason}
		if since != 0 {
			p.Since = time.Unix(0, since).In(time.FixedZone("", offset))
		}
		if hasProcess {
			p.Process = &ckpt.Process{Host: host, PID: pid, Start: start}
		}
		got, ok := appendPresence([]byte("x"), p)
		want, err := json.Marshal(p)
		if !ok {
			if !bytes.Equal(got, []byte("x")) {
				t.Fatalf("appendPresence changed its buffer when it declined: %q", got)
			}
			return
		}
		if err != nil || !bytes.Equal(got[1:], want) {
			t.Fatalf("appendPresence(%+v) = %q; json.Marshal gives %q (%v)", p, got[1:], want, err)
		}
		back, ok := decodePresence(want)
		if !ok || !samePresence(back, p) {
			t.Fatalf("decodePresence does not read back its own canonical form %q: %+v, %v", want, back, ok)
		}
	})
}
