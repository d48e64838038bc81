package filestore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// refParseIndexLine is the index line's grammar read the plain way
// (strings and strconv): what parseIndexLine must agree with.
func refParseIndexLine(line []byte, version int) (ientry, bool) {
	n := 7
	if version == 1 {
		n = 6
	}
	f := bytes.SplitN(line, []byte("\t"), n+1)
	if len(f) != n+1 {
		return ientry{}, false
	}
	e := ientry{id: string(f[0]), status: ckpt.Status(f[4]), archived: string(f[5]) == "a", summary: f[n], interval: -1}
	var err1, err2, err3, err4 error
	e.rev, err1 = strconv.ParseInt(string(f[1]), 10, 64)
	e.size, err2 = strconv.ParseInt(string(f[2]), 10, 64)
	e.updated, err3 = strconv.ParseInt(string(f[3]), 10, 64)
	if n == 7 {
		if e.interval, err4 = strconv.ParseInt(string(f[6]), 10, 64); err4 == nil && e.interval < 0 {
			err4 = strconv.ErrRange
		}
	}
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || ckpt.ValidateID(e.id) != nil || len(f[n]) == 0 || f[n][0] != '{' {
		return ientry{}, false
	}
	return e, true
}

// FuzzParseIndexLine: whatever an index line holds, at either version,
// parseIndexLine accepts exactly what the plain reading does and reads
// the same fields.
func FuzzParseIndexLine(f *testing.F) {
	f.Add([]byte("a/b\t3\t120\t1768487400000000000\tin_progress\t-\t900000000000\t{\"id\":\"a/b\"}"), 2)
	f.Add([]byte("a/b\t3\t120\t1768487400000000000\tin_progress\t-\t{\"id\":\"a/b\"}"), 1)
	f.Add([]byte("a/b\t-3\t+120\t99999999999999999999\tdone\ta\t-1\t{}"), 2)
	f.Add([]byte("a//b\t1\t1\t1\tx\t-\t0\t{"), 2)
	f.Fuzz(func(t *testing.T, line []byte, version int) {
		if version != 1 {
			version = indexVersion
		}
		got, ok := parseIndexLine(line, version)
		want, wok := refParseIndexLine(line, version)
		if ok != wok || ok && (got.id != want.id || got.rev != want.rev || got.size != want.size || got.updated != want.updated ||
			got.interval != want.interval || got.status != want.status || got.archived != want.archived || !bytes.Equal(got.summary, want.summary)) {
			t.Fatalf("parseIndexLine(%q) = %+v, %v; the plain reading gives %+v, %v", line, got, ok, want, wok)
		}
	})
}

// FuzzParseUTCNano: a time in the form RFC3339Nano prints a UTC time in
// reads as time.Parse reads it; any other form is refused.
func FuzzParseUTCNano(f *testing.F) {
	for _, s := range []string{"2026-01-15T14:30:00Z", "2026-01-15T14:30:00.5Z", "2026-01-15T14:30:00.50Z", "2024-02-29T23:59:59.999999999Z",
		"2025-02-29T00:00:00Z", "0001-01-01T00:00:00Z", "2026-01-15T24:00:00Z", "2026-01-15T14:30:00.Z"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := parseUTCNano(b)
		want, err := time.Parse(time.RFC3339Nano, string(b))
		canonical := err == nil && want.UTC().Format(time.RFC3339Nano) == string(b) && !want.IsZero()
		if ok != canonical || ok && !got.Equal(want) {
			t.Fatalf("parseUTCNano(%q) = %v, %v; time.Parse gives %v, %v (canonical %v)", b, got, ok, want, err, canonical)
		}
	})
}

// FuzzDecodeEntry: a journal line decodeEntry accepts reads as
// json.Unmarshal reads it, and appendEntry writes it back in a form it
// accepts.
func FuzzDecodeEntry(f *testing.F) {
	f.Add([]byte(`{"kind":"event","id":"a/b","rev":3,"type":"note","at":"2026-01-15T14:30:00.5Z","sum":"x","size":120,"summary":{"id":"a/b","rev":3,"agent":{},"status":"in_progress","progress":{"done":0,"total":0},"heartbeat":{"interval":"15m0s"},"started_at":"0001-01-01T00:00:00Z","updated_at":"2026-01-15T14:30:00Z"}}`))
	f.Add([]byte(`{"kind":"deleted","id":"a/b","rev":4,"at":"2026-01-15T14:30:00+02:00"}`))
	f.Add([]byte(`{"kind":"event","id":"a","rev":1,"at":"2026-01-15T14:30:00Z","summary":{"id":"a"},"id":"b"}`))
	f.Add([]byte(`{"kind":"event","id":"a","rev":-0,"at":"2026-01-15T14:30:00Z","summary":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := decodeEntry(line)
		if !ok {
			return
		}
		var want jentry
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("decodeEntry(%q) accepted what encoding/json refuses: %v", line, err)
		}
		if !got.At.Equal(want.At) || got.At.Format(time.RFC3339Nano) != want.At.Format(time.RFC3339Nano) {
			t.Fatalf("decodeEntry(%q).At = %v, encoding/json reads %v", line, got.At, want.At)
		}
		orig := got
		got.At, want.At = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeEntry(%q) = %+v, encoding/json reads %+v", line, got, want)
		}
		if back, err := appendEntry(nil, &orig); err == nil && len(back) > 0 {
			if _, ok := decodeEntry(back); !ok {
				t.Fatalf("decodeEntry refuses appendEntry's %q", back)
			}
		}
	})
}
