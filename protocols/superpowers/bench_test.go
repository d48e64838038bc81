package superpowers

import (
	"fmt"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

// BenchmarkMirror is one change mirrored under the .metadata.lock: lock,
// read and merge the file on disk, durable write, unlock.
func BenchmarkMirror(b *testing.B) {
	adaptertest.BenchMirror(b, New(), native(b), func(c *ckpt.Checkpoint, i int) { c.Context.LastProcessed = fmt.Sprintf("Task %d", i) })
}
