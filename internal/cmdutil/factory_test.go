package cmdutil

import (
	"errors"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// FuzzParseNow: CKPT_NOW is outside input. Whatever it holds, a value is
// either a UTC time within the range ckpt can compare (never the zero
// time, so durations to and from it hold in a time.Duration) or refused
// as invalid input naming the variable.
func FuzzParseNow(f *testing.F) {
	for _, s := range []string{"2026-01-15T14:30:00Z", "2026-01-15T14:30:00.5+02:00", "1970-01-01T00:00:00Z",
		"1969-12-31T23:59:59Z", "2262-04-11T00:00:00Z", "9999-12-31T23:59:59Z", "yesterday", "", "0001-01-01T00:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := parseNow(v)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) || !strings.Contains(err.Error(), EnvNow) {
				t.Fatalf("parseNow(%q) refused with %v, not invalid input naming "+EnvNow, v, err)
			}
			return
		}
		if got.Location() != time.UTC || got.Before(minNow) || got.After(maxNow) {
			t.Fatalf("parseNow(%q) = %v, outside [%v, %v] or not UTC", v, got, minNow, maxNow)
		}
	})
}
