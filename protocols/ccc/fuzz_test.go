package ccc

import (
	"testing"

	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// FuzzImport: any input either fails cleanly or gives a state a store
// accepts, whose export (a progress file with a readable continuation
// prompt) imports again to the same export, byte for byte.
func FuzzImport(f *testing.F) {
	adaptertest.ImportRoundTrip{Format: New(), Path: ProgressFile, CheckExport: func(t *testing.T, out []byte) {
		if _, err := ContinuationPrompt(out); err != nil {
			t.Fatalf("the export has no readable prompt: %v\n%s", err, out)
		}
	}}.Fuzz(f,
		`{"linearIssue":"CIA-1","taskIndex":9,"totalTasks":3,"awaitingGate":"x"}`,
		"**Issue:** A-1\n## Current Task\n- x — failed: y\n  - nested\n## Blockers\n- None\n## Continuation Prompt\n")
}
