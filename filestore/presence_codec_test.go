package filestore

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// FuzzPresenceCodec holds the hand-written beat record codec to
// encoding/json: what appendBeat writes is json.Marshal's bytes, and a
// record decodeBeat accepts reads as json.Unmarshal reads it.
func FuzzPresenceCodec(f *testing.F) {
	f.Add([]byte(`{"state":"busy","since":"2026-11-23T18:20:39.067728047Z","process":{"host":"vm","pid":2692,"start":"123456"}}`), "busy", int64(1795458039067728047), 0, "", "vm", 2692, "123456", true, "s1", "")
	f.Add([]byte(`{"seen":"2026-01-15T14:31:00Z","state":"waiting","since":"2026-01-15T14:30:00+02:00","reason":"permission prompt","for":"thing","at":"2026-01-15T14:30:00Z"}`), "waiting", int64(0), 7200, "Claude needs your permission to use Bash", "", 0, "", false, "", "thing")
	f.Add([]byte(`{}`), "", int64(-62135596800000000000/1e9), 1, "<&>", "h\u2028", -1, "x\"y", true, "\n", "")
	f.Add([]byte(`{"state":"ended","since":"0001-01-01T00:00:00Z"}`), "ended", int64(253402300800000000), 0, "\xff", "é", 1<<40, "", true, "", "person")
	f.Add([]byte(`{"process":{"host":"a","pid":-0}}`), "", int64(1), 59, "", "", 0, "", false, "", "")
	f.Add([]byte(`{"seen":"2026-01-15T14:31:00Z","process":{"host":"a","pid":3},"bound":"2026-01-15T14:31:00Z","session":"x"}`), "", int64(1), 0, "", "", 0, "", false, "", "")
	f.Fuzz(func(t *testing.T, raw []byte, state string, since int64, offset int, reason, host string, pid int, start string, hasProcess bool, session, waitsFor string) {
		if seen, got, ok := decodeBeat(raw); ok {
			var want beatRecord
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatalf("decodeBeat(%q) accepted what encoding/json refuses: %v", raw, err)
			}
			if !samePresence(got, want.Presence) || !seen.Equal(want.Seen) || got.Since.Format(time.RFC3339Nano) != want.Since.Format(time.RFC3339Nano) {
				t.Fatalf("decodeBeat(%q) = %v %+v; encoding/json reads %+v", raw, seen, got, want)
			}
		}
		p := ckpt.Presence{State: ckpt.PresenceState(state), Reason: reason, Session: session, For: waitsFor}
		var seen time.Time
		if since != 0 {
			p.Since = time.Unix(0, since).In(time.FixedZone("", offset))
			p.At, seen = p.Since.Add(time.Second), p.Since.Add(2*time.Second)
		}
		if hasProcess {
			p.Process = &ckpt.Process{Host: host, PID: pid, Start: start}
			p.Bound = seen
		}
		got, ok := appendBeat([]byte("x"), seen, p)
		want, err := json.Marshal(beatRecord{Seen: seen, Presence: p})
		if !ok {
			if !bytes.Equal(got, []byte("x")) {
				t.Fatalf("appendBeat changed its buffer when it declined: %q", got)
			}
			return
		}
		if err != nil || !bytes.Equal(got[1:], want) {
			t.Fatalf("appendBeat(%v, %+v) = %q; json.Marshal gives %q (%v)", seen, p, got[1:], want, err)
		}
		backSeen, back, ok := decodeBeat(want)
		if !ok || !samePresence(back, p) || !backSeen.Equal(seen) {
			t.Fatalf("decodeBeat does not read back its own canonical form %q: %v %+v, %v", want, backSeen, back, ok)
		}
	})
}
