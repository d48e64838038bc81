package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestBufferKeepsEveryWrite: writers in many goroutines while a
// reader reads (go test -race sees any unguarded access), and every write
// is there at the end.
func TestBufferKeepsEveryWrite(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("%d bytes, want 800", len(got))
	}
}
