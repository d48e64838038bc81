package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeLayout is how every terminal view prints a time: RFC 3339, to the
// second, in the zone the time carries (the store keeps UTC).
const TimeLayout = time.RFC3339

// Plural is "1 thing" or "N things".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Dash is s, or "-" for an empty table cell.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ShortDuration prints d coarsely for one-line views: 45s, 12m, 3h5m,
// 2d4h (rounded down).
func ShortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// Ago says how long before now t was, e.g. "3m ago" (ShortDuration), "in
// 5s" for a time ahead of now, "never" for a zero t.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + ShortDuration(-d)
	}
	return ShortDuration(d) + " ago"
}

// squeeze puts s on one line (runs of white space become one space) and
// shortens it to at most n runes, ending with "…" when cut. Controls other
// than white space are kept: the terminal views escape them last
// (Terminal), so they stay visible.
func squeeze(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + ellipsis
}
