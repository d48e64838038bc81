package ckpt_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// durationRef is Duration.UnmarshalJSON as it was before its fast path:
// every string through encoding/json.
func durationRef(b []byte) (ckpt.Duration, bool) {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.ParseDuration(s)
		return ckpt.Duration(v), err == nil
	}
	var secs float64
	if json.Unmarshal(b, &secs) != nil {
		return 0, false
	}
	return ckpt.Duration(secs * float64(time.Second)), true
}

func TestDurationUnmarshal(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`"15m0s"`: 15 * time.Minute, `"1h30m"`: 90 * time.Minute, `90`: 90 * time.Second,
		`"\u0031s"`: time.Second, `1.5`: 1500 * time.Millisecond,
	} {
		var d ckpt.Duration
		if err := d.UnmarshalJSON([]byte(in)); err != nil || d.D() != want {
			t.Errorf("%s: got %v, %v; want %v", in, d.D(), err, want)
		}
	}
	for _, in := range []string{`"soon"`, `""`, `"1x"`, `true`, `"15m`, `{}`} {
		var d ckpt.Duration
		if err := d.UnmarshalJSON([]byte(in)); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("%s: got %v, want an ErrInvalid error", in, err)
		}
	}
}

// FuzzDurationUnmarshal holds UnmarshalJSON's fast path for plain strings
// to what encoding/json makes of the same bytes.
func FuzzDurationUnmarshal(f *testing.F) {
	for _, s := range []string{`"15m0s"`, `"1h30m"`, `90`, `"\u0031s"`, `"1\"s"`, `"é"`, `"\t1s"`, `""`, `"`, `-3.5`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d ckpt.Duration
		err := d.UnmarshalJSON(b)
		want, ok := durationRef(b)
		if (err == nil) != ok || (ok && d != want) {
			t.Fatalf("%q: got %v, %v; encoding/json makes %v, %v", b, d, err, want, ok)
		}
	})
}

// FuzzDurationMarshal holds MarshalJSON's hand-quoted string to
// json.Marshal of the same string.
func FuzzDurationMarshal(f *testing.F) {
	for _, d := range []int64{0, 1, 999, 1500, int64(time.Millisecond), int64(90 * time.Minute), -1, 1<<63 - 1, -1 << 63} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, d int64) {
		got, err := ckpt.Duration(d).MarshalJSON()
		want, _ := json.Marshal(time.Duration(d).String())
		if err != nil || string(got) != string(want) {
			t.Fatalf("%d: %s, %v; json.Marshal writes %s", d, got, err, want)
		}
	})
}
