package pgstore

import (
	"encoding/binary"
	"math"
	"testing"
	"time"
)

// FuzzDecodeOneResult: the fast statement's result row, read from the
// wire in binary formats (fastwire.go), never panics whatever the server
// sends; a well-formed timestamptz reads back as the microseconds it
// encodes, and the presence is copied out of the connection's buffer.
func FuzzDecodeOneResult(f *testing.F) {
	stamp := func(t time.Time) []byte {
		return binary.BigEndian.AppendUint64(nil, uint64(microsSinceY2K(t)))
	}
	now := time.Date(2026, 11, 27, 15, 0, 0, 123456000, time.UTC)
	f.Add([]byte("id"), stamp(now), stamp(now.Add(-time.Hour)), []byte(`{"state":"working"}`), false, false)
	f.Add([]byte("id"), stamp(time.Date(1969, 1, 1, 0, 0, 0, 1000, time.UTC)), []byte{}, []byte{}, true, true)
	f.Add([]byte{}, []byte{1, 2, 3}, []byte{0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []byte(nil), false, true)
	f.Fuzz(func(t *testing.T, id, clock, beat, presence []byte, noBeat, noPresence bool) {
		if noBeat {
			beat = nil
		}
		if noPresence {
			presence = nil
		}
		res, err := decodeOneResult([][]byte{id, clock, beat, presence})
		if err != nil {
			return
		}
		if len(clock) != 8 {
			t.Fatalf("a clock of %d bytes decoded", len(clock))
		}
		v := int64(binary.BigEndian.Uint64(clock))
		if v == math.MaxInt64 || v == math.MinInt64 {
			t.Fatal("an infinite clock decoded")
		}
		if got := microsSinceY2K(res.dbNow); got != v {
			t.Fatalf("clock %d read back as %d (%v)", v, got, res.dbNow)
		}
		if (beat == nil) != (res.beat == nil) {
			t.Fatalf("beat %x decoded as %v", beat, res.beat)
		}
		if presence != nil {
			if string(res.presence) != string(presence) {
				t.Fatalf("presence %q read as %q", presence, res.presence)
			}
			if len(presence) > 0 && &res.presence[0] == &presence[0] {
				t.Fatal("the presence was not copied out of the connection's buffer")
			}
		}
	})
}
