package sitebuilder

import (
	"testing"

	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// FuzzImport: any input either fails cleanly or gives a state a store
// accepts, whose export imports again to the same export; and the export of
// an imported JSON file reproduces every field of it.
func FuzzImport(f *testing.F) {
	adaptertest.ImportRoundTrip{Format: New(), Path: "progress/checkpoints/a-t.json", JSON: true}.Fuzz(f,
		`{"agent":"a","task_id":"t","subtasks":{"total":3,"completed":5,"items":[{"id":"x","status":"done"},{"id":"x"}]},"errors":["e"]}`)
}
