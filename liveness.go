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
	iv := c.Heartbeat.Interval.D()
	if iv <= 0 {
		iv = DefaultInterval
	}
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
	age := now.Sub(c.LastSeen())
	if age < 0 {
		age = 0
	}
	if !c.Status.Live() || c.Archived != nil {
		return NotLive, age
	}
	warn, stale := t.For(c)
	switch {
	case age > stale:
		return Stale, age
	case age > warn:
		return Warn, age
	}
	return Live, age
}
