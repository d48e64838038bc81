package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryByteInEveryLane: a string of plain bytes with any one byte
// value at any position of its first two words, or two such bytes, alone
// and behind a long run (after which the writer reads words), is
// written exactly as json.Marshal writes it and read back exactly as
// json.Unmarshal reads it (or refused where it refuses): the word-at-a-time
// scans miss no byte in any lane.
func TestEveryByteInEveryLane(t *testing.T) {
	const n = 19                                     // two words and a tail
	long := strings.Repeat("b", wordsAfter+8) + "\n" // behind it the writer reads words
	check := func(s string) {
		t.Helper()
		for _, s := range []string{s, long + s} {
			w := writer{ok: true}
			w.str(s)
			want, _ := json.Marshal(s)
			if !bytes.Equal(w.b, want) {
				t.Fatalf("str(%q) = %s, json.Marshal: %s", s, w.b, want)
			}
			in := []byte(`"` + s + `"`)
			r := reader{b: in, ok: true}
			got := r.str()
			r.ok = r.ok && r.i == len(in) // the string's closing quote ends the input
			var ref string
			err := json.Unmarshal(in, &ref)
			// The codec refuses invalid UTF-8 that encoding/json would
			// replace: only its acceptance of valid input must match.
			if r.ok && (err != nil || got != ref) || !r.ok && err == nil && strings.ToValidUTF8(s, "") == s {
				t.Fatalf("reading %q: %q, ok %v; encoding/json: %q, %v", in, got, r.ok, ref, err)
			}
		}
	}
	plain := strings.Repeat("a", n)
	for c := range 256 {
		for p := range n {
			check(plain[:p] + string([]byte{byte(c)}) + plain[p+1:])
			for q := p + 1; q < n; q += 3 {
				b := []byte(plain)
				b[p], b[q] = byte(c), byte(255-c)
				check(string(b))
			}
		}
	}
}
