package agentcheckpoints

import (
	"fmt"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// BenchmarkImport reads the largest real agent checkpoint.
func BenchmarkImport(b *testing.B) {
	data := adaptertest.ReadFile(b, "testdata/fixtures/KAI-7.secondary_g.json")
	for b.Loop() {
		if _, err := New().Import("agent_checkpoints/secondary_g.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExport renders it back with the three-way merge.
func BenchmarkExport(b *testing.B) {
	im, err := New().Import("agent_checkpoints/secondary_g.json", adaptertest.ReadFile(b, "testdata/fixtures/KAI-7.secondary_g.json"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := New().Export(im.State); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMirror is one heartbeat-sized change mirrored: a backup of the
// old file, the durable write of the new, the rotation.
func BenchmarkMirror(b *testing.B) {
	adaptertest.BenchMirror(b, New(), native(b), func(c *ckpt.Checkpoint, i int) { c.CurrentStep = fmt.Sprintf("step %d", i) })
}

// BenchmarkExportCoordinated is BenchmarkExport with the coordination
// times a mirror carries (last_inbox_check, last_epic_readme_update)
// written into coordination_state; its ratio to BenchmarkExport is their
// cost.
func BenchmarkExportCoordinated(b *testing.B) {
	im, err := New().Import("agent_checkpoints/secondary_g.json", adaptertest.ReadFile(b, "testdata/fixtures/KAI-7.secondary_g.json"))
	if err != nil {
		b.Fatal(err)
	}
	co := Coordination{InboxCheck: im.State.UpdatedAt, EpicReadmeUpdate: im.State.UpdatedAt}
	for b.Loop() {
		if _, err := New().ExportCoordinated(im.State, co); err != nil {
			b.Fatal(err)
		}
	}
}
