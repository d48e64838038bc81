package ckpt

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("15m0s"). It also reads a bare number as seconds, as sitebuilder's (seed 003)
// interval_seconds is written.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	// A duration's string holds digits, '.', '-' and the units (µ
	// included, which JSON keeps as it is): nothing to escape, so the
	// quotes around it are what json.Marshal writes, without its
	// reflection (the state and index encoders call this per write).
	s := time.Duration(d).String()
	b := make([]byte, 0, len(s)+2)
	return append(append(append(b, '"'), s...), '"'), nil
}

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	// The common form, as MarshalJSON writes it, has no escapes to undo:
	// no decoder then (a listing reads one per checkpoint).
	isString := plainJSONString(b)
	if isString {
		s = string(b[1 : len(b)-1])
	} else {
		isString = json.Unmarshal(b, &s) == nil
	}
	if isString {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("%w: duration %q: use a form such as 90s, 15m or 1h30m", ErrInvalid, s)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("%w: duration %s is neither a string nor a number of seconds", ErrInvalid, b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// plainJSONString reports whether b is a JSON string of printable ASCII
// without escapes: its value is the bytes between the quotes.
func plainJSONString(b []byte) bool {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
