//go:build unix

package filestore

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

func init() { childModes["CKPT_TEST_REPAIR_FSIZE"] = repairUnderFileSizeLimit }

// repairUnderFileSizeLimit runs Repair on the store CKPT_TEST_STORE with
// files limited to CKPT_TEST_REPAIR_FSIZE bytes (RLIMIT_FSIZE: a write past
// it fails with EFBIG, as a full disk fails with ENOSPC), prints Repair's
// error and exits 1 if there is one.
func repairUnderFileSizeLimit() {
	limit, _ := strconv.ParseUint(os.Getenv("CKPT_TEST_REPAIR_FSIZE"), 10, 64)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	s, err := Open(os.Getenv("CKPT_TEST_STORE"))
	if err == nil {
		_, err = s.Repair(context.Background(), nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestRepairOnAFullDisk: a repair whose writes fail (here: past the file
// size limit) fails with the write's error, having cut nothing, and works
// once there is room.
func TestRepairOnAFullDisk(t *testing.T) {
	s, f, notes := acked(t)
	lines := historyLines(t, f)
	lines[2] = bytes.Replace(lines[2], []byte("note 3"), []byte("note X"), 1)
	writeLines(t, f, lines, nil)
	before := hashTree(t, f.history())

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CKPT_TEST_REPAIR_FSIZE=1024", "CKPT_TEST_STORE="+s.Dir())
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("repair with no room to save the damaged remainder succeeded: %s", out)
	}
	if !bytes.Contains(out, []byte("file too large")) {
		t.Errorf("repair's error does not say what happened: %s", out)
	}
	if hashTree(t, f.history()) != before {
		t.Fatal("a failed repair changed the history")
	}
	repairClean(t, s)
	allNotes(t, s, notes)
}
