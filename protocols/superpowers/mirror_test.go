package superpowers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/internal/adaptertest"
)

func trackDir(root string) string {
	return filepath.Join(root, "conductor", "tracks", "param-schema_20260301")
}

func TestMirrorWritesTheTrackFileAndReleasesTheLock(t *testing.T) {
	root := t.TempDir()
	c := native(t)
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	got := adaptertest.ReadFile(t, filepath.Join(trackDir(root), "metadata.json"))
	want := adaptertest.Export(t, New(), c)
	if string(got) != string(want) {
		t.Errorf("mirror wrote:\n%s\nexport gives:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(trackDir(root), ".metadata.lock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lock left behind: %v", err)
	}
}

func TestMirrorFailsClearlyWhileTheLockIsHeld(t *testing.T) {
	root := t.TempDir()
	lock := filepath.Join(trackDir(root), ".metadata.lock")
	if err := os.MkdirAll(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	f := &Format{LockTimeout: 200 * time.Millisecond, LockPoll: 10 * time.Millisecond}
	start := time.Now()
	err := f.Mirror(root, native(t))
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Mirror with a held lock: %v", err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", waited)
	}
	for _, part := range []string{lock, "rmdir", "another tool"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not mention %q", err, part)
		}
	}
	if _, err := os.Stat(filepath.Join(trackDir(root), "metadata.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("metadata.json written without the lock: %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the other tool's lock was removed: %v", err)
	}
}

func TestMirrorWaitsForTheLockToBeReleased(t *testing.T) {
	root := t.TempDir()
	lock := filepath.Join(trackDir(root), ".metadata.lock")
	if err := os.MkdirAll(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	// releasing is closed before the lock goes: closing it after would race
	// a Mirror that takes the freed lock and returns in between.
	releasing := make(chan struct{})
	go func() {
		time.Sleep(150 * time.Millisecond)
		close(releasing)
		os.Remove(lock)
	}()
	// The timeout only ends a broken test: the release may come late on a
	// loaded machine.
	f := &Format{LockTimeout: time.Minute, LockPoll: 10 * time.Millisecond}
	if err := f.Mirror(root, native(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-releasing:
	default:
		t.Fatal("Mirror wrote before the lock was released")
	}
	if _, err := os.Stat(filepath.Join(trackDir(root), "metadata.json")); err != nil {
		t.Fatal(err)
	}
}

// TestMirrorAndALockingToolLoseNothing runs the document's own locking
// shell protocol (mkdir the lock, read-modify-write, rmdir) against Mirror:
// every update of both survives.
func TestMirrorAndALockingToolLoseNothing(t *testing.T) {
	root := t.TempDir()
	c := native(t)
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(trackDir(root), "metadata.json")
	lock := filepath.Join(trackDir(root), ".metadata.lock")
	const rounds = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	wg.Add(2)
	go func() { // the tool: counts its own updates in a field ckpt does not know
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			for os.Mkdir(lock, 0o755) != nil {
				time.Sleep(time.Millisecond)
			}
			var doc map[string]any
			data, err := os.ReadFile(path)
			if err == nil {
				err = json.Unmarshal(data, &doc)
			}
			if err != nil {
				os.Remove(lock)
				errs <- fmt.Errorf("tool read: %v", err)
				return
			}
			n, _ := doc["tool_updates"].(float64)
			doc["tool_updates"] = n + 1
			out, _ := json.MarshalIndent(doc, "", "  ")
			err = os.WriteFile(path, out, 0o644)
			os.Remove(lock)
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() { // ckpt: mirrors a new resume point each round
		defer wg.Done()
		f := &Format{LockTimeout: time.Minute, LockPoll: time.Millisecond}
		s := c
		for i := 0; i < rounds; i++ {
			s = s.Clone()
			s.Context.LastProcessed = fmt.Sprintf("Task %d", i)
			if err := f.Mirror(root, s); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	doc := adaptertest.Decoded(t, adaptertest.ReadFile(t, path)).(map[string]any)
	if doc["tool_updates"] != float64(rounds) {
		t.Errorf("tool_updates = %v, want %d: an update was lost", doc["tool_updates"], rounds)
	}
	exec := doc["loop_state"].(map[string]any)["checkpoints"].(map[string]any)["EXECUTE"].(map[string]any)
	if exec["last_task"] != fmt.Sprintf("Task %d", rounds-1) {
		t.Errorf("last_task = %v: ckpt's last update was lost", exec["last_task"])
	}
}

// TestMirrorKeepsWhatAnotherToolWrote: fields another tool changed since the
// import survive a mirror that did not change them.
func TestMirrorKeepsWhatAnotherToolWrote(t *testing.T) {
	root := t.TempDir()
	c, _ := adaptertest.ImportFile(t, New(), "testdata/seed/seed000-loop.json")
	c.TaskID = "param-schema_20260301"
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(trackDir(root), "metadata.json")
	doc := adaptertest.Decoded(t, adaptertest.ReadFile(t, path)).(map[string]any)
	plan := doc["loop_state"].(map[string]any)["checkpoints"].(map[string]any)["PLAN"].(map[string]any)
	plan["notes"] = "edited by the evaluator"
	doc["reviewer"] = "evaluate-plan"
	out, _ := json.Marshal(doc)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	c = c.Clone()
	c.Steps[c.StepIndex("EXECUTE")].Status = ckpt.StepDone
	if err := New().Mirror(root, c); err != nil {
		t.Fatal(err)
	}
	doc = adaptertest.Decoded(t, adaptertest.ReadFile(t, path)).(map[string]any)
	cps := doc["loop_state"].(map[string]any)["checkpoints"].(map[string]any)
	if cps["PLAN"].(map[string]any)["notes"] != "edited by the evaluator" || doc["reviewer"] != "evaluate-plan" {
		t.Errorf("the other tool's fields were overwritten: %v", doc)
	}
	if cps["EXECUTE"].(map[string]any)["status"] != "PASSED" {
		t.Errorf("ckpt's change is missing: %v", cps["EXECUTE"])
	}
}

func TestMirrorKeepsADamagedFileAside(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(trackDir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(trackDir(root), "metadata.json")
	if err := os.WriteFile(path, []byte(`{"loop_state": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := New().Mirror(root, native(t)); err != nil {
		t.Fatal(err)
	}
	adaptertest.Decoded(t, adaptertest.ReadFile(t, path))
	aside, _ := filepath.Glob(path + ".damaged-*")
	if len(aside) != 1 || string(adaptertest.ReadFile(t, aside[0])) != `{"loop_state": {` {
		t.Errorf("damaged file not kept aside: %v", aside)
	}
}

func TestMirrorRefusesATrackIDOutsideTheTracks(t *testing.T) {
	root := t.TempDir()
	for _, track := range []string{"../escape", "a/b", ".hidden"} {
		c := native(t)
		c.TaskID = track
		if err := New().Mirror(root, c); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("track %q: %v", track, err)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Errorf("something was written: %v", entries)
	}
}

// One step's resume point does not leak into the next: the last_task
// recorded during EXECUTE stays under EXECUTE when FIX starts, and FIX gets
// its own once the agent records one.
func TestMirrorKeepsLastTaskWithItsStep(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 2, 13, 12, 0, 0, 0, time.UTC)
	min := func(m int) time.Time { return at.Add(time.Duration(m) * time.Minute) }
	str := func(s string) *string { return &s }
	events := []ckpt.Event{
		adaptertest.Event(ckpt.EventCreated, min(0), ckpt.Created{Patch: ckpt.Patch{TaskID: str("t1")}, Steps: []ckpt.Step{{ID: "EXECUTE"}, {ID: "FIX"}}}),
		adaptertest.Event(ckpt.EventStep, min(1), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepInProgress}),
		adaptertest.Event(ckpt.EventUpdate, min(2), ckpt.Patch{LastProcessed: str("Task 5: wire the selector")}),
	}
	mirror := func(n int) map[string]map[string]any {
		t.Helper()
		if err := New().Mirror(root, adaptertest.Fold(t, "t1", events[:n]...)); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Loop struct {
				Checkpoints map[string]map[string]any `json:"checkpoints"`
			} `json:"loop_state"`
		}
		data := adaptertest.ReadFile(t, filepath.Join(root, "conductor", "tracks", "t1", "metadata.json"))
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Loop.Checkpoints
	}
	if cps := mirror(3); cps["EXECUTE"]["last_task"] != "Task 5: wire the selector" {
		t.Fatalf("during EXECUTE: %v", cps)
	}
	events = append(events,
		adaptertest.Event(ckpt.EventStep, min(3), ckpt.StepChange{ID: "EXECUTE", Status: ckpt.StepDone}),
		adaptertest.Event(ckpt.EventStep, min(4), ckpt.StepChange{ID: "FIX", Status: ckpt.StepInProgress}))
	cps := mirror(5)
	if cps["EXECUTE"]["last_task"] != "Task 5: wire the selector" || cps["FIX"]["last_task"] != nil {
		t.Errorf("EXECUTE's last task moved to FIX: %v", cps)
	}
	events = append(events, adaptertest.Event(ckpt.EventUpdate, min(5), ckpt.Patch{LastProcessed: str("Fix 1: the overflow")}))
	cps = mirror(6)
	if cps["EXECUTE"]["last_task"] != "Task 5: wire the selector" || cps["FIX"]["last_task"] != "Fix 1: the overflow" {
		t.Errorf("after FIX's own: %v", cps)
	}
}
