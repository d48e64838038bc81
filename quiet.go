package ckpt

import "time"

// Quiet is a stale report's hint to a store (Filter.Quiet): the time and
// thresholds it judges at. A store MAY leave out of a page a checkpoint
// the rest of the filter matches and that Quiet.Omits, and count it in
// Page.Omitted instead: such a checkpoint is live and not quiet at At, so
// the report only counts it. A store that cannot tell cheaply, or ignores
// the hint, returns it as usual; MatchSummary does not apply it. This is
// what lets `ckpt stale` skip decoding the summaries of the checkpoints
// that beat recently (docs/design.md, "Leaving out the checkpoints that
// beat").
type Quiet struct {
	At         time.Time
	Thresholds Thresholds
}

// Omits reports whether a checkpoint with this status and archived flag,
// last seen at lastSeen (the later of its last beat and its last update),
// with this heartbeat interval, whose presence record binds a process or
// not, is certainly judged live and neither warn, stale nor dead at q.At
// (PresenceOf's Alarm is Live whatever alive says): its status is live,
// it is not archived, no process is bound (a process found gone makes it
// dead however recent), it was seen no more than MaxClockSkew after At
// (a clock ahead is warn) and no longer before At than both its warn and
// stale thresholds.
func (q *Quiet) Omits(status Status, archived bool, lastSeen time.Time, interval time.Duration, process bool) bool {
	if q == nil || q.At.IsZero() || archived || process || !status.Live() {
		return false
	}
	if lastSeen.Sub(q.At) > MaxClockSkew {
		return false
	}
	warn, stale := q.Thresholds.ForInterval(interval)
	return q.At.Sub(lastSeen) <= min(warn, stale)
}
