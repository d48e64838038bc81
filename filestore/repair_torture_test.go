package filestore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// repairSteps are the durable steps of a repair (see repairPoint), in
// order: the torture kills a repair after each, and at random moments.
var repairSteps = []string{"saved", "keys", "cut", "appended", "unmarked", "rebuilt"}

func init() {
	childModes["CKPT_TORTURE_REPAIR"] = func() {
		if at := os.Getenv("CKPT_REPAIR_DIE_AT"); at != "" {
			repairPoint = func(step string) {
				if step == at {
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {}
				}
			}
		}
		s, err := Open(os.Getenv("CKPT_TORTURE_REPAIR"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if _, err := s.Repair(context.Background(), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
}

// TestRepairKilledAnywhereKeepsAcknowledgedWrites damages a history whose
// every event was acknowledged (in the middle, or its last line, with
// state.json holding the newest state), runs ckpt repair in a process
// killed after each of its durable steps or at a random moment, then
// repairs again: every acknowledged note is in the state the history
// folds to, and the store checks clean. Counted in kills: each step plus 4
// random ones in the everyday suite, CKPT_TORTURE=N random ones per damage
// for the long suite.
func TestRepairKilledAnywhereKeepsAcknowledgedWrites(t *testing.T) {
	random := 4
	if n, err := strconv.Atoi(os.Getenv("CKPT_TORTURE")); err == nil && n > 0 {
		random = n
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for _, damage := range []struct {
		name string
		line func(n int) int // which line (0-based) of n to damage
		// stale: state.json is the backup of revision 10, as a writer
		// killed before its caches leaves it; events 11 and 12 are in the
		// history only.
		stale bool
	}{
		{"middle", func(n int) int { return n / 2 }, false},
		{"last line", func(n int) int { return n - 1 }, false},
		{"middle, state behind", func(n int) int { return n / 2 }, true},
	} {
		t.Run(damage.name, func(t *testing.T) {
			kills := append([]string{}, repairSteps...)
			for range random {
				kills = append(kills, "")
			}
			for _, at := range kills {
				s, f, notes := acked(t)
				lines := historyLines(t, f)
				i := damage.line(len(lines))
				lines[i][len(lines[i])/2] ^= 0x01
				writeLines(t, f, lines, nil)
				if damage.stale {
					b, err := os.ReadFile(filepath.Join(f.backups(), backupName(10)))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(f.state(), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				dir := s.Dir()
				s.Close()
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "CKPT_TORTURE_REPAIR="+dir, "CKPT_REPAIR_DIE_AT="+at)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if at == "" {
					time.Sleep(time.Duration(rng.IntN(30000)) * time.Microsecond)
					cmd.Process.Signal(syscall.SIGKILL)
				}
				_ = cmd.Wait()
				s2, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s2.Repair(context.Background(), nil); err != nil {
					t.Fatalf("killed at %q: repair again: %v", at, err)
				}
				allNotes(t, s2, notes)
				if r, err := s2.Check(context.Background(), nil); err != nil || r.Errors() > 0 {
					t.Errorf("killed at %q: check after the second repair: %v %+v", at, err, r)
				}
				if t.Failed() {
					t.Fatalf("the repair killed at %q (%q after the first kill) lost an acknowledged write", at, cmd.ProcessState)
				}
				s2.Close()
			}
		})
	}
}
