package filestore

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// sampleEnvelope is a valid state envelope of checkpoint "a/b".
func sampleEnvelope(t testing.TB) []byte {
	st, err := ckpt.Fold("a/b", []ckpt.Event{{Seq: 1, At: time.Unix(1700000000, 0), Type: ckpt.EventCreated,
		Data: []byte(`{"title":"t","steps":[{"id":"s1"}],"meta":{"k":{"x":[1,2]}}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := encodeEnvelope(st, "0123456789abcdef0123456789abcdef", 321)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// FuzzParseEnvelope feeds arbitrary bytes to the state envelope parser: it
// must never panic, and whatever it accepts must be self-consistent and
// re-encode to the same bytes.
func FuzzParseEnvelope(f *testing.F) {
	good := sampleEnvelope(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(bytes.Replace(good, []byte(`"rev":1`), []byte(`"rev":2`), 1))
	f.Add([]byte(`{"format":"ckpt-state","version":1,"id":"a/b","rev":1,"sum":"0123456789abcdef0123456789abcdef","history_size":1,"state_sum":"x","state":{}}`))
	f.Add([]byte(`,"state":}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		env, st, err := parseEnvelope(data, "a/b")
		if err != nil {
			return
		}
		if st == nil || st.ID != "a/b" || st.Rev != env.Rev || env.Rev < 1 || env.HistorySize < 1 || len(env.Sum) != sumLen {
			t.Fatalf("accepted an inconsistent envelope: %+v %+v", env, st)
		}
		again, err := encodeEnvelope(st, env.Sum, env.HistorySize)
		if err != nil {
			t.Fatal(err)
		}
		env2, st2, err := parseEnvelope(again, "a/b")
		if err != nil || env2.Rev != env.Rev || !sameState(st, st2) {
			t.Fatalf("an accepted envelope does not round-trip: %v", err)
		}
	})
}

// sampleHistory is a valid three-event history.
func sampleHistory(t testing.TB) []byte {
	var out []byte
	var prev string
	for i, ev := range []ckpt.Event{
		ckpt.MustEvent(ckpt.EventCreated, time.Unix(1700000000, 0), ckpt.Actor{}, ckpt.Created{}),
		ckpt.MustEvent(ckpt.EventNote, time.Unix(1700000001, 0), ckpt.Actor{Agent: "x"}, ckpt.Note{Text: "n"}),
		ckpt.MustEvent(ckpt.EventCycle, time.Unix(1700000002, 0), ckpt.Actor{}, nil),
	} {
		ev.Seq, ev.Prev = int64(i+1), prev
		line, sum, err := ckpt.EncodeLine(ev)
		if err != nil {
			t.Fatal(err)
		}
		out, prev = append(out, line...), sum
	}
	return out
}

// FuzzScanHistory feeds arbitrary bytes to the history scanner: it must
// never panic, the good prefix, torn tail and damage must partition the
// input, and the good prefix must rescan to the same events.
func FuzzScanHistory(f *testing.F) {
	good := sampleHistory(f)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(good[:len(good)/2])
	flipped := bytes.Clone(good)
	flipped[len(good)/3] ^= 1
	f.Add(flipped)
	f.Add(append(bytes.Clone(good), "{\n"...))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st *ckpt.Checkpoint
		r := scanHistory(data, 0, ckpt.Chain{}, func(e ckpt.Event, _ int64) (err error) {
			st, err = ckpt.Apply("a/b", st, e)
			return err
		})
		if r.end < 0 || r.end > int64(len(data)) || r.end+r.torn > int64(len(data)) {
			t.Fatalf("scan ends at %d with %d torn bytes in %d bytes", r.end, r.torn, len(data))
		}
		if r.bad == nil && r.end+r.torn != int64(len(data)) {
			t.Fatalf("without damage the prefix (%d) and torn tail (%d) must cover all %d bytes", r.end, r.torn, len(data))
		}
		if r.bad != nil && (r.torn != 0 || r.bad.offset != r.end) {
			t.Fatalf("damage at %d but the prefix ends at %d (torn %d)", r.bad.offset, r.end, r.torn)
		}
		if r.torn > 0 && bytes.IndexByte(data[r.end:], '\n') >= 0 {
			t.Fatalf("a torn tail holds a complete line: only a last line without its newline is torn")
		}
		if r.end > 0 && data[r.end-1] != '\n' {
			t.Fatalf("the good prefix does not end with a newline")
		}
		again := scanHistory(data[:r.end], 0, ckpt.Chain{}, nil)
		if again.bad != nil || again.torn != 0 || again.chain != r.chain || again.lines != r.lines {
			t.Fatalf("the good prefix does not rescan cleanly: %+v vs %+v", again, r)
		}
		if r.lines > 0 && (st == nil || st.Rev != r.chain.Seq) {
			t.Fatalf("folded state does not match the scanned chain")
		}
	})
}

// FuzzFindKey checks the backwards key scan against a forward scan of the
// same history: whatever key is asked, both agree.
func FuzzFindKey(f *testing.F) {
	f.Add(3, "k1")
	f.Add(0, "")
	f.Add(40, `quote"and\back`)
	f.Fuzz(func(t *testing.T, n int, key string) {
		n = n%60 + 1
		if n < 1 {
			n += 60
		}
		dir := t.TempDir()
		var data []byte
		var prev string
		for i := 1; i <= n; i++ {
			ev := ckpt.MustEvent(ckpt.EventNote, time.Unix(1700000000, 0), ckpt.Actor{}, ckpt.Note{Text: key})
			ev.Seq, ev.Prev = int64(i), prev
			if i%3 == 0 {
				ev.Key = key + string(rune('a'+i%5))
			}
			line, sum, err := ckpt.EncodeLine(ev)
			if err != nil {
				t.Fatal(err) // every string marshals
			}
			data, prev = append(data, line...), sum
		}
		path := dir + "/h"
		if err := writeFileForTest(path, data); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{key, key + "a", key + "b"} {
			var expect int64
			scanHistory(data, 0, ckpt.Chain{}, func(e ckpt.Event, _ int64) error {
				if e.Key == want && want != "" {
					expect = e.Seq
				}
				return nil
			})
			e, ok, err := findKey(path, int64(len(data)), want)
			if err != nil {
				t.Fatal(err)
			}
			got := int64(0)
			if ok {
				got = e.Seq
			}
			if got != expect {
				t.Fatalf("findKey(%q) = seq %d, a forward scan says %d", want, got, expect)
			}
		}
	})
}

func writeFileForTest(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// FuzzParsePresence: the beat file (its time and presence record) is rewritten in place without a lock,
// so a reader may meet it torn, and a store from elsewhere may hold
// anything. Whatever it holds, reading it never panics, and what is
// accepted encodes again.
func FuzzParsePresence(f *testing.F) {
	f.Add([]byte(`{"state":"working","reason":"tool","since":"2026-01-01T00:00:00Z","process":{"host":"h","pid":12,"start":5}}`))
	f.Add([]byte(`{"state":"work`))
	f.Add([]byte(`{"state":"sleeping","process":{"pid":-1}}`))
	f.Add([]byte(`null`))
	f.Add([]byte{})
	f.Add([]byte(`{"seen":"2026-01-01T00:00:01Z","state":"ended","at":"2026-01-01T00:00:00Z","session":"s1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, p := parseBeat(b)
		if _, err := json.Marshal(p); err != nil {
			t.Fatalf("an accepted presence does not encode: %v", err)
		}
	})
}

// FuzzParseMovedKeys checks the moved keys file reader against every line
// it can hold: it never panics, and a key it reports is the one asked for.
func FuzzParseMovedKeys(f *testing.F) {
	f.Add([]byte(`{"key":"k1","seq":3,"type":"note","saved":"history.jsonl.damaged-1-3"}`+"\n"), "k1")
	f.Add([]byte(`{"key":"k1","seq":3`), "k1")
	f.Add([]byte(`{"key":"\u006b1"}`+"\n"+`{"key":"k1","seq":4}`), "k1")
	f.Add([]byte("\n\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		m, ok := parseMovedKeys(data, key)
		if ok && m.Key != key {
			t.Fatalf("asked for %q, found %q", key, m.Key)
		}
	})
}

// FuzzWindowStart holds windowStart to the line-by-line reading it
// replaced (each line from the end back, newest first, the first partial
// line of a buffer that starts inside the history never taken): both find
// the same last window lines in any bytes.
func FuzzWindowStart(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), false, uint8(2))
	f.Add([]byte("tail of a line\nb\nc"), true, uint8(5))
	f.Add([]byte("\n\n\n"), true, uint8(1))
	f.Add([]byte(""), false, uint8(3))
	f.Fuzz(func(t *testing.T, buf []byte, inside bool, w uint8) {
		window := int(w)%8 + 1
		start := int64(0)
		if inside {
			start = 1
		}
		var want [][]byte // the reference: newest first
		stop := len(buf)
		for len(want) < window && stop > 0 {
			i := bytes.LastIndexByte(buf[:stop-1], '\n')
			if i < 0 && start > 0 {
				break
			}
			want = append(want, buf[i+1:stop])
			stop = i + 1
		}
		slices.Reverse(want)
		if got := buf[windowStart(buf, start, window):]; !bytes.Equal(got, bytes.Join(want, nil)) {
			t.Fatalf("windowStart(%q, start %d, window %d) leaves %q, want %q", buf, start, window, got, bytes.Join(want, nil))
		}
	})
}
