package ckpt_test

import (
	"testing"

	"github.com/ckpt-dev/ckpt"
)

func TestParseTraceparent(t *testing.T) {
	good := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tc, ok := ckpt.ParseTraceparent(good)
	if !ok || !tc.Sampled || tc.String() != good || tc.TraceID[0] != 0x4b || tc.SpanID[7] != 0xb7 {
		t.Fatalf("ParseTraceparent(%q) = %+v, %v", good, tc, ok)
	}
	for _, bad := range []string{
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",     // no flags
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero span
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // invalid version
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // separator
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",  // not hex
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 ", // trailing
	} {
		if _, ok := ckpt.ParseTraceparent(bad); ok {
			t.Errorf("ParseTraceparent(%q) accepted", bad)
		}
	}
}

// FuzzParseTraceparent: any accepted value writes back as itself (modulo
// flags other than sampled) and never panics.
func FuzzParseTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	f.Add("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03")
	f.Fuzz(func(t *testing.T, s string) {
		tc, ok := ckpt.ParseTraceparent(s)
		if !ok {
			return
		}
		again, ok2 := ckpt.ParseTraceparent(tc.String())
		if !ok2 || again != tc {
			t.Fatalf("%q parsed to %+v, which writes %q and reads back as %+v, %v", s, tc, tc.String(), again, ok2)
		}
	})
}
