package fourstep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

// TestAutoWritesOnlyWhereTheProjectOptedIn: the hooks' final checkpoint
// writes .ccc-progress.md only in a project that uses seed 001, and names
// the step that failed.
func TestAutoWritesOnlyWhereTheProjectOptedIn(t *testing.T) {
	fx := newCheckpointFixture(t)
	c, err := fx.store.Get(context.Background(), "feature/CIA-123", 0)
	if err != nil {
		t.Fatal(err)
	}
	a := Auto{Store: fx.store, Dir: fx.dir, Now: func() time.Time { return fx.now }}
	progress := filepath.Join(fx.dir, ccc.ProgressFile)
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatalf("a project without seed 001: %v", err)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Fatalf("a project that did not opt in got %s (%v)", ccc.ProgressFile, err)
	}
	fx.writeState(`{"activeTaskFiles": []}`)
	if err := a.Run(context.Background(), c); err != nil {
		t.Fatalf("a project with %s: %v", ccc.StateFile, err)
	}
	if data, err := os.ReadFile(progress); err != nil || !strings.Contains(string(data), "CSV import") {
		t.Fatalf("%s: %v\n%s", ccc.ProgressFile, err, data)
	}
	os.Remove(progress)
	if err := os.Mkdir(progress, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "steps failed: Failed: Progress file") {
		t.Fatalf("a failing progress file: %v", err)
	}
}

// TestAtGateRunsOnlyAtAGate: seed 001's stop hook checkpoints at gate
// boundaries: a Stop writes .ccc-progress.md while .ccc-state.json awaits
// a gate, and not otherwise.
func TestAtGateRunsOnlyAtAGate(t *testing.T) {
	fx := newCheckpointFixture(t)
	c, err := fx.store.Get(context.Background(), "feature/CIA-123", 0)
	if err != nil {
		t.Fatal(err)
	}
	a := Auto{Store: fx.store, Dir: fx.dir, Now: func() time.Time { return fx.now }}
	progress := filepath.Join(fx.dir, ccc.ProgressFile)
	fx.writeState(`{"linearIssue": "CIA-123", "awaitingGate": null}`)
	if err := a.AtGate(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Fatalf("no gate awaited, yet %s was written (%v)", ccc.ProgressFile, err)
	}
	fx.writeState(`{"linearIssue": "CIA-123", "awaitingGate": "spec"}`)
	if err := a.AtGate(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(progress); err != nil || !strings.Contains(string(data), "## Continuation Prompt") {
		t.Fatalf("at the gate: %s: %v\n%s", ccc.ProgressFile, err, data)
	}
}
