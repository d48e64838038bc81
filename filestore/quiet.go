package filestore

import (
	"time"

	"github.com/ckpt-dev/ckpt"
)

// quietOmits reports whether a settled full listing under q may leave e
// out (ckpt.Quiet): judged on the index line's status, archived flag,
// update time and heartbeat interval and on the beat record (read as Beat
// writes it: decodeBeat), so the summary is not decoded. Only an
// entry the listing trusts as it is (its liveness record came from the
// liveness log: see summaryFor) qualifies; one whose interval is unknown
// (a version 1 index line), whose record is not in the form Beat writes,
// or that binds a process is returned as usual.
func quietOmits(q *ckpt.Quiet, e *ientry) bool {
	if !e.bulk || e.beat == nil || e.unknown || e.interval < 0 {
		return false
	}
	seen, p, ok := decodeBeat(e.beat)
	if !ok || seen.IsZero() {
		return false
	}
	last := time.Unix(0, e.updated)
	if seen.After(last) {
		last = seen
	}
	return q.Omits(e.status, e.archived, last, time.Duration(e.interval), p.Process != nil)
}

// parseUTCNano reads a time in the form time.RFC3339Nano prints a UTC
// time in (2006-01-02T15:04:05.999999999Z, the fraction without trailing
// zeros): the time presenceReader.time reads of it. false means "not that
// form" (not necessarily invalid).
func parseUTCNano(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(s []byte) int {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(b[0:4]), num(b[5:7]), num(b[8:10])
	hour, minute, sec := num(b[11:13]), num(b[14:16]), num(b[17:19])
	ns := 0
	switch frac := b[19 : len(b)-1]; {
	case len(frac) == 0:
	case len(frac) < 2 || len(frac) > 10 || frac[0] != '.' || frac[len(frac)-1] == '0':
		return time.Time{}, false
	default:
		if ns = num(frac[1:]); ns < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			ns *= 10
		}
	}
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ns, time.UTC)
	if t.Day() != day || t.IsZero() { // February 30th and the like
		return time.Time{}, false
	}
	return t, true
}
