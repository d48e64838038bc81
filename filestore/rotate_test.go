package filestore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestJournalRotationUnderConcurrentWriters: writers that fill journal
// segment after segment get every change journaled (no "the change journal
// did not record it" warning), the store keeps no descriptor per write,
// and a listing finds every checkpoint. Rotation used to close the archived
// segment's descriptor number a second time (by then another writer's
// file) and leak the new segment's: at 4 MiB segments a 100,000-checkpoint
// seeding failed a third of its journal writes and ran out of descriptors.
func TestJournalRotationUnderConcurrentWriters(t *testing.T) {
	defer func(seg int64) { segmentMax = seg }(segmentMax)
	segmentMax = 4096
	s, err := Init(t.TempDir()+"/.ckpt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	openFDs := func() int {
		des, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return -1
		}
		return len(des)
	}
	before := openFDs()
	ctx := context.Background()
	const writers, each = 8, 150
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("w%d/c%03d", w, i)
				title := "rotation"
				e := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
				r, err := s.Append(ctx, id, e, ckpt.AppendOptions{})
				if err != nil || len(r.Warnings) > 0 {
					t.Errorf("append %s: %v %v", id, err, r.Warnings)
					return
				}
			}
		})
	}
	wg.Wait()
	all, err := ckpt.ListAll(ctx, s, ckpt.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != writers*each {
		t.Errorf("listed %d checkpoints, wrote %d", len(all), writers*each)
	}
	// Closed, the Store holds none of what it keeps between writes (the
	// journal's files, its marker file, its last checkpoints' files).
	s.Close()
	if after := openFDs(); runtime.GOOS == "linux" && after > before+8 {
		t.Errorf("%d descriptors open after %d writes and Close, %d before: the store leaks some per write", after, writers*each, before)
	}
	segs, err := s.journal().segments()
	if err != nil || len(segs) < 3 {
		t.Errorf("the journal has %d segments (%v): the test did not rotate", len(segs), err)
	}
}
