package autockpt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/mirror"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
)

var t0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// fixture is a project directory with a checkpoint in a memstore.
type fixture struct {
	t     *testing.T
	dir   string
	store *memstore.Store
	c     *ckpt.Checkpoint
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{t: t, dir: t.TempDir(), store: memstore.New()}
	title := "CSV import"
	e := ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	if _, err := fx.store.Append(context.Background(), "feature/CIA-123", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := fx.store.Get(context.Background(), "feature/CIA-123", 0)
	if err != nil {
		t.Fatal(err)
	}
	fx.c = c
	return fx
}

func (fx *fixture) writeState(s string) {
	fx.t.Helper()
	if err := os.WriteFile(filepath.Join(fx.dir, ccc.StateFile), []byte(s), 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

// TestAutoWritesOnlyWhereTheProjectOptedIn: the hooks' final checkpoint
// writes .ccc-progress.md only in a project that uses seed 001, and names
// the step that failed.
func TestAutoWritesOnlyWhereTheProjectOptedIn(t *testing.T) {
	fx := newFixture(t)
	a := Auto{Store: fx.store, Dir: fx.dir, Now: func() time.Time { return t0 }}
	progress := filepath.Join(fx.dir, ccc.ProgressFile)
	if err := a.Run(context.Background(), fx.c); err != nil {
		t.Fatalf("a project without seed 001: %v", err)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Fatalf("a project that did not opt in got %s (%v)", ccc.ProgressFile, err)
	}
	fx.writeState(`{"activeTaskFiles": []}`)
	if err := a.Run(context.Background(), fx.c); err != nil {
		t.Fatalf("a project with %s: %v", ccc.StateFile, err)
	}
	if data, err := os.ReadFile(progress); err != nil || !strings.Contains(string(data), "CSV import") {
		t.Fatalf("%s: %v\n%s", ccc.ProgressFile, err, data)
	}
	os.Remove(progress)
	if err := os.Mkdir(progress, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := a.Run(context.Background(), fx.c); err == nil || !strings.Contains(err.Error(), "1 of 2 steps failed: Failed: Progress file") {
		t.Fatalf("a failing progress file: %v", err)
	}
}

// TestAtGateRunsOnlyAtAGate: seed 001's stop hook checkpoints at gate
// boundaries: a Stop writes .ccc-progress.md while .ccc-state.json awaits
// a gate, and not otherwise.
func TestAtGateRunsOnlyAtAGate(t *testing.T) {
	fx := newFixture(t)
	a := Auto{Store: fx.store, Dir: fx.dir, Now: func() time.Time { return t0 }}
	progress := filepath.Join(fx.dir, ccc.ProgressFile)
	fx.writeState(`{"linearIssue": "CIA-123", "awaitingGate": null}`)
	if err := a.AtGate(context.Background(), fx.c); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(progress); !os.IsNotExist(err) {
		t.Fatalf("no gate awaited, yet %s was written (%v)", ccc.ProgressFile, err)
	}
	fx.writeState(`{"linearIssue": "CIA-123", "awaitingGate": "spec"}`)
	if err := a.AtGate(context.Background(), fx.c); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(progress); err != nil || !strings.Contains(string(data), "## Continuation Prompt") {
		t.Fatalf("at the gate: %s: %v\n%s", ccc.ProgressFile, err, data)
	}
}

// TestAutoLeavesTheTrackerToCkptServer: step 3 runs (through Tracker)
// only when .ccc-state.json names a Linear issue and LINEAR_API_KEY is
// set, and its failure, reported or not, is the hook's error in the
// completion report's words. cmd/ckpt's TestHookTrackerStep runs it with
// the real ckpt-server against a fake Linear.
func TestAutoLeavesTheTrackerToCkptServer(t *testing.T) {
	fx := newFixture(t)
	vars := map[string]string{}
	var calls []string
	var answer []byte
	var answerErr error
	a := Auto{Store: fx.store, Dir: fx.dir, Now: func() time.Time { return t0 }, Getenv: func(k string) string { return vars[k] },
		Tracker: func(_ context.Context, id string) ([]byte, error) {
			calls = append(calls, id)
			return answer, answerErr
		}}
	ctx := context.Background()
	fx.writeState(`{"linearIssue": "CIA-123"}`)
	if err := a.Run(ctx, fx.c); err != nil || len(calls) != 0 {
		t.Fatalf("without LINEAR_API_KEY: %v, tracker calls %v", err, calls)
	}
	vars[EnvLinearKey] = "lin-key"
	fx.writeState(`{"phase": "execution"}`)
	if err := a.Run(ctx, fx.c); err != nil || len(calls) != 0 {
		t.Fatalf("without linearIssue: %v, tracker calls %v", err, calls)
	}
	fx.writeState(`{"linearIssue": "CIA-123"}`)
	answer = []byte(`{"profile":"auto","steps":[{"name":"Linear update"}],"succeeded":1,"total":1,"comment_id":"c1"}`)
	if err := a.Run(ctx, fx.c); err != nil || len(calls) != 1 || calls[0] != "feature/CIA-123" {
		t.Fatalf("a configured tracker that succeeded: %v, tracker calls %v", err, calls)
	}
	const failed = "Failed: Linear update (HTTP 503) — status not persisted to issue tracker."
	answer = []byte(`{"profile":"auto","steps":[{"name":"Linear update","failed":"` + failed + `"}],"succeeded":0,"total":1}`)
	if err := a.Run(ctx, fx.c); err == nil || err.Error() != "1 of 2 steps failed: "+failed {
		t.Fatalf("a configured tracker that failed: %v", err)
	}
	answer, answerErr = nil, errors.New("exit status 1: ckpt: feature/CIA-123: not found")
	if err := a.Run(ctx, fx.c); err == nil || !strings.Contains(err.Error(), "1 of 2 steps failed: Failed: Linear update (exit status 1: ckpt: feature/CIA-123: not found) — status not persisted") {
		t.Fatalf("ckpt-server failed without a report: %v", err)
	}
	a.Tracker = nil
	if err := a.Run(ctx, fx.c); err == nil || !strings.Contains(err.Error(), "ckpt-server cannot be started from here") {
		t.Fatalf("no way to start ckpt-server: %v", err)
	}
}

// FuzzTrackerFailure: whatever ckpt-server printed, the hook gets one
// report line starting "Failed: " or none, never a panic.
func FuzzTrackerFailure(f *testing.F) {
	f.Add([]byte(`{"profile":"auto","steps":[{"name":"Linear update"}],"succeeded":1,"total":1}`), false)
	f.Add([]byte(`{"steps":[{"name":"Linear update","failed":"Failed: Linear update (HTTP 503) — status not persisted to issue tracker."}]}`), false)
	f.Add([]byte(`{"steps":[]}`), true)
	f.Add([]byte(`{"steps":[{"name":"a"},{"name":"b"}]}`), false)
	f.Add([]byte("Checkpoint complete: 1/1 steps succeeded.\n"), false)
	f.Add([]byte(nil), true)
	f.Fuzz(func(t *testing.T, out []byte, failed bool) {
		var err error
		if failed {
			err = errors.New("exit status 1")
		}
		line := TrackerFailure(out, err)
		if !strings.Contains(string(out), `"steps"`) && !strings.HasPrefix(line, "Failed: Linear update (") {
			t.Fatalf("no report, yet the line is %q", line)
		}
		if utf8.RuneCountInString(line) > 300 {
			t.Fatalf("a line of %d runes", utf8.RuneCountInString(line))
		}
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("the line %q spans lines", line)
		}
	})
}

// TestOptedIn: a project opts in with its own .ccc-state.json or a ccc
// mirror rooted at it, and nothing else.
func TestOptedIn(t *testing.T) {
	project := t.TempDir()
	list := mirror.ForStoreDir(filepath.Join(project, ".ckpt"))
	os.Mkdir(filepath.Join(project, ".ckpt"), 0o755)
	if ok, why := OptedIn(project, list); ok {
		t.Errorf("a plain project opted in: %s", why)
	}
	if _, err := list.Edit(func(cfg *mirror.Config) error {
		cfg.Mirrors = append(cfg.Mirrors, mirror.Entry{Format: ccc.Name, Root: "elsewhere"}, mirror.Entry{Format: "agent-checkpoints", Root: "."})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if ok, why := OptedIn(project, list); ok {
		t.Errorf("a ccc mirror under another root, or another format, opted in: %s", why)
	}
	list.Edit(func(cfg *mirror.Config) error {
		cfg.Mirrors = append(cfg.Mirrors, mirror.Entry{Format: ccc.Name, Root: ".", ID: "x"})
		return nil
	})
	if ok, why := OptedIn(project, list); !ok || !strings.Contains(why, "ccc mirror") {
		t.Errorf("a ccc mirror of the project: %v %q", ok, why)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, ccc.StateFile), []byte(`{}`), 0o644)
	if ok, why := OptedIn(other, mirror.ForStoreDir(filepath.Join(other, ".ckpt"))); !ok || !strings.Contains(why, ccc.StateFile) {
		t.Errorf(".ccc-state.json: %v %q", ok, why)
	}
}
