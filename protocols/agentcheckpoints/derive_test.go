package agentcheckpoints

import (
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestDeriveProgressMatchesTheFold: the adapters set progress as ckpt's
// fold derives it (deriveProgress in jsondoc.go, shared by the four
// adapters), so a store that folds an imported state keeps the same numbers.
func TestDeriveProgressMatchesTheFold(t *testing.T) {
	steps := func(st ...ckpt.StepStatus) []ckpt.Step {
		var out []ckpt.Step
		for i, s := range st {
			out = append(out, ckpt.Step{ID: string(rune('a' + i)), Status: s})
		}
		return out
	}
	for _, c := range []*ckpt.Checkpoint{
		{Status: ckpt.StatusInProgress, Steps: steps(ckpt.StepDone, ckpt.StepPending, ckpt.StepSkipped)},
		{Status: ckpt.StatusInProgress, Steps: steps(ckpt.StepDone, ckpt.StepFailed, ckpt.StepPending, ckpt.StepPending, ckpt.StepPending, ckpt.StepInProgress)},
		{Status: ckpt.StatusInProgress, Progress: ckpt.Progress{Done: 10, Total: 29}},
		{Status: ckpt.StatusDone},
		{Status: ckpt.StatusPending},
	} {
		deriveProgress(c)
		s := stored(t, "x", c, time.Unix(1e9, 0))
		if s.Progress != c.Progress {
			t.Errorf("deriveProgress gives %+v, the fold %+v", c.Progress, s.Progress)
		}
	}
}
