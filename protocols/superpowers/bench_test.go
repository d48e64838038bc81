package superpowers

import (
	"fmt"
	"testing"
)

// BenchmarkMirror is one change mirrored under the .metadata.lock: lock,
// read and merge the file on disk, durable write, unlock.
func BenchmarkMirror(b *testing.B) {
	root := b.TempDir()
	c := native(b)
	f := New()
	i := 0
	for b.Loop() {
		i++
		c.Context.LastProcessed = fmt.Sprintf("Task %d", i)
		if err := f.Mirror(root, c); err != nil {
			b.Fatal(err)
		}
	}
}
