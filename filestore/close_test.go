//go:build unix

package filestore

import (
	"context"
	"syscall"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestCloseClosesOnlyItsOwnFiles: closing a Store, once or twice, with or
// without appends, closes no descriptor it did not open. A Store that
// never appended used to close descriptor 0, and later whatever file had
// taken that number (a config.json being written failed with "bad file
// descriptor").
func TestCloseClosesOnlyItsOwnFiles(t *testing.T) {
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		t.Skipf("this process has no descriptor 0 to watch: %v", err)
	}
	dir := t.TempDir()
	s, err := Init(dir+"/.ckpt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if err := syscall.Fstat(0, &st); err != nil {
		t.Fatalf("closing an unused Store closed descriptor 0: %v", err)
	}
	ctx := context.Background()
	title := "x"
	if _, err := s.Append(ctx, "a", ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "t"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if err := syscall.Fstat(0, &st); err != nil {
		t.Fatalf("closing a Store twice closed descriptor 0: %v", err)
	}
}
