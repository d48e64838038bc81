//go:build unix

package filestore

import (
	"context"
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestABeatFileAppearsLocked: a checkpoint's first Beat creates its beat
// file already locked, so no other Beat can lock the empty file before
// its creator has written the record. (Created and then locked, another
// Beat took the empty file for an older ckpt's plain beat at its
// modification time, and a beat older than that moment was dropped:
// TestConcurrentBeatsKeepTheLatest failed about once in 150 runs.)
func TestABeatFileAppearsLocked(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if _, err := s.Append(ctx, "job", ckpt.Event{Type: ckpt.EventCreated, Data: json.RawMessage(`{"title":"t"}`)}, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	called := false
	beatCreated = func(path string) {
		called = true
		fd, err := syscall.Open(path, syscall.O_RDWR, 0)
		if err != nil {
			t.Errorf("the new beat file is not at its path: %v", err)
			return
		}
		defer syscall.Close(fd)
		if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
			t.Errorf("another Beat could lock the new, empty beat file (flock: %v); want it held by its creator", err)
		}
	}
	t.Cleanup(func() { beatCreated = nil })
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	if err := s.Beat(ctx, "job", ckpt.Signal{At: at}); err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("the first Beat did not create the beat file")
	}
	c, err := s.Get(ctx, "job", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Heartbeat.LastBeat.Equal(at) {
		t.Errorf("last beat %v; want the beat's own time %v", c.Heartbeat.LastBeat, at)
	}
	entries, err := os.ReadDir(s.files("job").dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if isTemp(e.Name()) {
			t.Errorf("the first Beat left %s in the checkpoint's directory", e.Name())
		}
	}
}
