//go:build unix

package filestore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

// TestCheckAndRepairLeaveALiveBeatsTemporaryFile: a checkpoint's first Beat
// creates its beat file under a temporary name, locked, and takes no
// checkpoint lock. A check in that moment must not report the file as an
// interrupted write's leftover, nor may a repair remove it from under the
// Beat; once nobody holds such a file, both treat it as a leftover again.
func TestCheckAndRepairLeaveALiveBeatsTemporaryFile(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	if _, err := s.Append(ctx, "job", ckpt.Event{Type: ckpt.EventCreated, Data: json.RawMessage(`{"title":"t"}`)}, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := false
	beatTempLocked = func(tmp string) {
		seen = true
		if r := checkReadOnly(t, s); len(r.Problems) != 0 {
			t.Errorf("check during a first Beat: %+v; want no problem", r.Problems)
		}
		r, err := s.Repair(ctx, nil)
		if err != nil {
			t.Errorf("repair during a first Beat: %v", err)
		} else if len(r.Problems) != 0 {
			t.Errorf("repair during a first Beat found %+v; want nothing", r.Problems)
		}
		if _, err := os.Lstat(tmp); err != nil {
			t.Errorf("the Beat's temporary file is gone after repair: %v", err)
		}
	}
	t.Cleanup(func() { beatTempLocked = nil })
	if err := s.Beat(ctx, "job", ckpt.Signal{}); err != nil {
		t.Fatalf("Beat with check and repair running beside it: %v", err)
	}
	if !seen {
		t.Fatal("the first Beat did not create its file under a temporary name")
	}
	beatTempLocked = nil

	// The same name left by a Beat that died before linking it: nobody
	// holds it, so it is a leftover.
	left := filepath.Join(s.files("job").dir, ".beat.tmp-1-00000000000000ff")
	if err := os.WriteFile(left, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wantProblems(t, checkReadOnly(t, s), "warning:leftover temporary file")
	repairClean(t, s)
	if _, err := os.Lstat(left); err == nil {
		t.Error("repair left a dead Beat's temporary file in place")
	}
}
