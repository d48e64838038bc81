package webhook

import (
	"maps"
	"testing"
)

// FuzzParseMemory: a memory file of any bytes (damaged, torn, hand-edited)
// parses without a panic, and what it parses to is written back and read
// again the same.
func FuzzParseMemory(f *testing.F) {
	f.Add([]byte(`{"id":"team/a","state":"blocked"}` + "\n" + `{"id":"team/a","state":""}` + "\n"))
	f.Add([]byte("\n" + `{"id":"kai-7/x","state":"failed"}` + "\n" + `{"id":"kai-7/y","sta`))
	f.Add([]byte(`{"id":"","state":"done"}` + "\n\xff\xfe" + `{"id":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		states, _ := ParseMemory(b)
		again, n := ParseMemory(encodeMemory(states))
		if n != len(states) || !maps.Equal(states, again) {
			t.Fatalf("%q parsed to %v, written and read back as %v (%d lines)", b, states, again, n)
		}
	})
}
