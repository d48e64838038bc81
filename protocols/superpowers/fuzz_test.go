package superpowers

import (
	"testing"

	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// FuzzImport: any input either fails cleanly or gives a state a store
// accepts, whose export imports again to the same export; and the export of
// an imported JSON file reproduces every field of it.
func FuzzImport(f *testing.F) {
	adaptertest.ImportRoundTrip{Format: New(), Path: "conductor/tracks/t/metadata.json", JSON: true}.Fuzz(f,
		`{"track_id":"t","loop_state":{"current_step":"FIX","step_status":"BLOCKED","checkpoints":{"FIX":"x"}}}`)
}
