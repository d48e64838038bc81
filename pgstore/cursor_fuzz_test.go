package pgstore

import (
	"testing"
)

// FuzzParseCursor feeds the change cursor parser what a client may send
// back (a cursor is outside input: an SSE Last-Event-ID, a --from flag):
// it never panics, and what it accepts formats back to the same cursor.
func FuzzParseCursor(f *testing.F) {
	for _, seed := range []string{"", "now", "abc123def456.10.0", "abc123def456.10.7.10:12:10,11", "abc123def456.12.3.10:12:",
		"abc123def456.1.2.3", "abc123def456.10.0.12:10:", "abc123def456.10.0.10:12:9", "x.y.z", "abc123def456..", "abc123def456.1.1.::"} {
		f.Add(seed)
	}
	s := &Store{storeID: "abc123def456"}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := parseCursor(s.storeID, in)
		if err != nil {
			return
		}
		out := s.format(c)
		again, err := parseCursor(s.storeID, out)
		if err != nil {
			t.Fatalf("%q parsed, its formatted form %q does not: %v", in, out, err)
		}
		if again != c {
			t.Fatalf("%q -> %+v -> %q -> %+v", in, c, out, again)
		}
	})
}
