package filestore

import (
	"fmt"
	"os"
	"testing"
)

// TestStoresStartingTogetherAdoptIdleMarkerFiles: Stores that begin
// writing at the same time (64 ckpt update processes) each adopt one of
// the idle marker files a closed Store left, rather than all trying the
// same first few and creating a file each.
func TestStoresStartingTogetherAdoptIdleMarkerFiles(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "m/a", createEvent())
	s.Close()
	names := func() int {
		t.Helper()
		des, err := os.ReadDir(s.journal().pending())
		if err != nil {
			t.Fatal(err)
		}
		return len(des)
	}
	// Sixteen Stores write at once, then close: sixteen idle files.
	open := func(n int) []*Store {
		var out []*Store
		for i := range n {
			st := mustOpen(t, s.Dir())
			appendOK(t, st, "m/a", noteEvent(fmt.Sprint(i)))
			out = append(out, st)
		}
		return out
	}
	for _, st := range open(16) {
		st.Close()
	}
	idle := names()
	if idle < 16 {
		t.Fatalf("%d marker files after 16 Stores wrote at once, want 16", idle)
	}
	held := open(12)
	defer func() {
		for _, st := range held {
			st.Close()
		}
	}()
	if got := names(); got != idle {
		t.Errorf("12 Stores writing at once with %d idle marker files left %d files: they created some instead of adopting", idle, got)
	}
}
