package ckpt

import "math"

// OverallProgress is the progress of several checkpoints taken together, as
// sitebuilder's (seed 003) STATUS.md reports it: the mean of their percents (each
// clamped to 0..100, a NaN counting 0; 0 for none) and how many are done.
func OverallProgress(cs []*Checkpoint) (percent float64, done int) {
	sum := 0.0
	for _, c := range cs {
		if c.Status == StatusDone {
			done++
		}
		p := c.Progress.Percent
		if math.IsNaN(p) || p < 0 {
			p = 0
		}
		sum += min(p, 100)
	}
	if len(cs) == 0 {
		return 0, done
	}
	return sum / float64(len(cs)), done
}

// RoundPercent rounds a percentage as Percent does, so every view shows
// the same number: half up, never 0 for some progress nor 100 for work not
// finished (a NaN or a negative is 0).
func RoundPercent(p float64) int {
	switch {
	case math.IsNaN(p) || p <= 0:
		return 0
	case p >= 100:
		return 100
	}
	return min(max(int(math.Floor(p+0.5)), 1), 99)
}
