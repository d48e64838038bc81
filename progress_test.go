package ckpt_test

import (
	"math"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestRoundPercent: every view prints a percentage the same way, and work
// not finished never reads 100% nor started work 0%.
func TestRoundPercent(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want int
	}{
		{0, 0}, {-3, 0}, {math.NaN(), 0}, {0.2, 1}, {0.5, 1}, {33.3, 33}, {66.5, 67},
		{99.4, 99}, {99.6, 99}, {100, 100}, {250, 100}, {math.Inf(1), 100},
	} {
		if got := ckpt.RoundPercent(c.in); got != c.want {
			t.Errorf("RoundPercent(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestOverallProgress: STATUS.md's overall progress is the mean of the
// checkpoints' percents, a figure out of range counting as its bound, and
// the done count.
func TestOverallProgress(t *testing.T) {
	c := func(st ckpt.Status, p float64) *ckpt.Checkpoint {
		return &ckpt.Checkpoint{Status: st, Progress: ckpt.Progress{Percent: p}}
	}
	cs := []*ckpt.Checkpoint{c(ckpt.StatusDone, 100), c(ckpt.StatusInProgress, 50), c(ckpt.StatusInProgress, math.NaN()),
		c(ckpt.StatusBlocked, -20), c(ckpt.StatusDone, 170)}
	if p, done := ckpt.OverallProgress(cs); p != 50 || done != 2 {
		t.Errorf("OverallProgress = %v, %d; want 50, 2", p, done)
	}
	if p, done := ckpt.OverallProgress(nil); p != 0 || done != 0 {
		t.Errorf("OverallProgress(nil) = %v, %d; want 0, 0", p, done)
	}
}
