package ckpt

import "time"

// Liveness says whether an agent still shows signs of life.
type Liveness string

// Liveness levels. NotLive is for checkpoints whose status cannot go stale
// (pending, done, failed, abandoned, or archived).
const (
	Live    Liveness = "live"
	Warn    Liveness = "warn"
	Stale   Liveness = "stale"
	NotLive Liveness = "-"
)

// Thresholds override the per-checkpoint liveness limits. A zero field means
// the default: Warn 2× and Stale 4× the checkpoint's heartbeat interval.
type Thresholds struct {
	Warn  time.Duration
	Stale time.Duration
}

// For returns the warn and stale ages that apply to c.
func (t Thresholds) For(c *Checkpoint) (warn, stale time.Duration) {
	return t.ForInterval(c.Heartbeat.Interval.D())
}

// maxInterval bounds the interval liveness multiplies, so that 4× an
// absurd interval cannot overflow into a negative duration.
const maxInterval = 365 * 24 * time.Hour

// ForInterval returns the warn and stale ages for a heartbeat interval iv.
func (t Thresholds) ForInterval(iv time.Duration) (warn, stale time.Duration) {
	if iv <= 0 {
		iv = DefaultInterval
	}
	iv = min(iv, maxInterval)
	warn, stale = 2*iv, 4*iv
	if t.Warn > 0 {
		warn = t.Warn
	}
	if t.Stale > 0 {
		stale = t.Stale
	}
	return warn, stale
}

// LivenessOf returns c's liveness at now and how long it has been silent.
func LivenessOf(c *Checkpoint, now time.Time, t Thresholds) (Liveness, time.Duration) {
	s := c.Summary()
	return s.Liveness(now, t)
}

// Liveness returns the summarised checkpoint's liveness at now and how long
// it has been silent.
func (s *Summary) Liveness(now time.Time, t Thresholds) (Liveness, time.Duration) {
	age := now.Sub(s.LastSeen())
	if age < 0 {
		age = 0
	}
	if !s.Status.Live() || s.Archived != nil {
		return NotLive, age
	}
	warn, stale := t.ForInterval(s.Heartbeat.Interval.D())
	switch {
	case age > stale:
		return Stale, age
	case age > warn:
		return Warn, age
	}
	return Live, age
}

// MaxClockSkew is how far ahead of a store's clock an event or beat time
// may be. A client clock further ahead would otherwise keep an agent "live"
// for as long as it is wrong; stores clamp such times to their own now.
const MaxClockSkew = 2 * time.Minute

// ClampTime returns at, or now when at is more than skew ahead of now.
// A zero at is returned as it is.
func ClampTime(at, now time.Time, skew time.Duration) time.Time {
	if !at.IsZero() && at.Sub(now) > skew {
		return now
	}
	return at
}

// NextBeat returns the liveness time a store keeps after a beat at `at`
// when it had `last`: at clamped against now, and never before last unless
// last itself is further ahead of now than the skew bound (a beat from a
// wrong clock, a store copied from a machine whose clock ran ahead): such
// a time would otherwise hold every later beat back for as long as it is
// wrong.
func NextBeat(last, at, now time.Time) time.Time {
	if at.IsZero() {
		at = now
	}
	at = ClampTime(at, now, MaxClockSkew).UTC()
	if at.Before(last) && last.Sub(now) <= MaxClockSkew {
		return last
	}
	return at
}
