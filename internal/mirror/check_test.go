package mirror

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
)

// A root in the mirror list that climbs out of the project is refused (a
// .ckpt/ can arrive in a cloned repository); an absolute one is the user's
// choice and is kept.
func TestRootsThatClimbOutAreRefused(t *testing.T) {
	for _, root := range []string{"..", "../elsewhere", "docs/../../x", `a/../..`} {
		data := `{"version":1,"mirrors":[{"format":"ccc","root":"` + root + `"}]}`
		if _, err := Decode([]byte(data)); ckpt.ErrorCode(err) != ckpt.CodeInvalid || !strings.Contains(err.Error(), "climbs out of the project") {
			t.Errorf("root %q: %v", root, err)
		}
	}
	for _, root := range []string{".", "docs/x", "a/../b", "/abs/elsewhere"} {
		data := `{"version":1,"mirrors":[{"format":"ccc","root":"` + root + `"}]}`
		if _, err := Decode([]byte(data)); err != nil {
			t.Errorf("root %q refused: %v", root, err)
		}
	}
	// Written into mirrors.json behind ckpt's back: nothing is written
	// outside, and the warning says why.
	env, _ := newMirrorEnv(t)
	os.WriteFile(filepath.Join(env.storeDir, FileName), []byte(`{"version":1,"mirrors":[{"format":"ccc","root":"../out"}]}`), 0o644)
	st := Wrap(env.mem, ForStoreDir(env.storeDir), env.options(nil))
	if _, err := st.Append(context.Background(), "a", startEvent("x"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(env.project), "out")); !os.IsNotExist(err) {
		t.Errorf("a mirror was written outside the project: %v", err)
	}
	if !strings.Contains(env.warn.String(), "climbs out of the project") {
		t.Errorf("warning %q", env.warn.String())
	}
}

// Two takeovers of one checkpoint in the same second make archives a and
// a_2: each gets a file of its own, so check and repair agree (before, both
// wrote one file and check always found one of them wrong).
func TestArchivesOfTheSameSecondGetFilesOfTheirOwn(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: agentcheckpoints.Name, Root: "."})
	ctx := context.Background()
	if _, err := m.Append(ctx, "kai-7/secondary_a", startEvent("Spec"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1768487400, 0).UTC()
	var names []string
	for _, agent := range []string{"B", "C"} {
		_, name, err := ckpt.TakeOverCheckpoint(ctx, m, "kai-7/secondary_a", ckpt.Agent{ID: agent}, ckpt.Lifecycle{At: at})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	if names[1] != names[0]+"_2" {
		t.Fatalf("archive names %q", names)
	}
	for _, f := range []string{"secondary_a_crashed_1768487400.json", "secondary_a_crashed_1768487400_2.json"} {
		if _, err := os.Stat(env.path("agent_checkpoints", f)); err != nil {
			t.Errorf("archive file: %v", err)
		}
	}
	checked, problems, err := m.Check(ctx, nil)
	if err != nil || checked != 3 || len(problems) != 0 {
		t.Errorf("check: %d checked, problems %+v, %v", checked, problems, err)
	}
	if fixed := Repair(ctx, env.mem, ForStoreDir(env.storeDir), nil, Options{}); len(fixed) != 0 {
		t.Errorf("repair found %+v where check found nothing", fixed)
	}
	// Two checkpoints that would write one file are reported by check.
	if _, err := m.Append(ctx, "other/secondary_a", startEvent("Other"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	_, problems, _ = m.Check(ctx, nil)
	if len(problems) != 1 || !strings.Contains(problems[0].What, "each overwrites the other") {
		t.Errorf("collision not reported: %+v", problems)
	}
	if env.warn.Len() != 0 {
		t.Errorf("warnings: %s", env.warn.String())
	}
}

// A temporary file a killed writer left beside a mirror file is reported
// by check and removed by repair; a fresh one (a write in flight) and files
// that are not the format's are left alone.
func TestLeftoverTemporaryFiles(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: agentcheckpoints.Name, Root: "."}, Entry{Format: ccc.Name, Root: ".", ID: "a"})
	ctx := context.Background()
	if _, err := m.Append(ctx, "a", startEvent("Spec"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * LeftoverAge)
	stale := []string{env.path("agent_checkpoints", ".a.json.tmp123456"), env.path("." + ccc.ProgressFile + ".tmp42")}
	kept := []string{env.path("agent_checkpoints", ".a.json.tmp999"), env.path(".notes.md.tmp77"), env.path("agent_checkpoints", "a.json.tmp1")}
	for i, p := range append(append([]string{}, stale...), kept...) {
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i != 2 { // kept[0] is fresh: a write in flight
			os.Chtimes(p, old, old)
		}
	}
	_, problems, err := m.Check(ctx, nil)
	if err != nil || len(problems) != 2 {
		t.Fatalf("check: %+v %v", problems, err)
	}
	for _, p := range problems {
		if p.What != "a temporary file left by an interrupted write" || !strings.Contains(p.Repair, "ckpt repair") {
			t.Errorf("problem %+v", p)
		}
	}
	fixed := Repair(ctx, env.mem, ForStoreDir(env.storeDir), nil, Options{})
	if len(fixed) != 2 || !fixed[0].Fixed || !fixed[1].Fixed || !strings.HasSuffix(fixed[0].What, "(removed)") {
		t.Errorf("repair %+v", fixed)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not removed: %v", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if _, problems, _ := m.Check(ctx, nil); len(problems) != 0 {
		t.Errorf("after repair: %+v", problems)
	}
}

// A write the mirror missed while .metadata.lock was held (seed 000) is
// lag that check reports and repair mends, even when no step moved; a lock
// older than superpowers.StaleLockAge fails a write at once (no 10 s
// stall) and check names it with its remedy.
func TestMetadataLockLagAndStaleLock(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: superpowers.Name, Root: "."})
	m.opts.Formats = func(string) (protocols.Format, error) {
		return &superpowers.Format{LockTimeout: 50 * time.Millisecond, LockPoll: 10 * time.Millisecond}, nil
	}
	ctx := context.Background()
	if _, err := m.Append(ctx, "t1", startEvent("Track", "PLAN"), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	lock := env.path("conductor", "tracks", "t1", ".metadata.lock")
	if err := os.Mkdir(lock, 0o755); err != nil {
		t.Fatal(err)
	}
	last := "Task 3: the parser"
	if _, err := m.Append(ctx, "t1", ckpt.MustEvent(ckpt.EventUpdate, t0, ckpt.Actor{}, ckpt.Patch{LastProcessed: &last}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	_, problems, err := m.Check(ctx, nil)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0].What, "last processed") {
		t.Fatalf("the lag was not reported: %+v %v", problems, err)
	}
	// A stale lock: the write fails at once, check says so.
	old := time.Now().Add(-2 * superpowers.StaleLockAge)
	os.Chtimes(lock, old, old)
	env.warn.Reset()
	start := time.Now()
	next := "Task 4"
	m.opts.Formats = func(string) (protocols.Format, error) {
		return &superpowers.Format{LockTimeout: time.Hour, LockPoll: 10 * time.Millisecond}, nil
	}
	if _, err := m.Append(ctx, "t1", ckpt.MustEvent(ckpt.EventUpdate, t0, ckpt.Actor{}, ckpt.Patch{NextToProcess: &next}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 30*time.Second || !strings.Contains(env.warn.String(), "is stale") {
		t.Errorf("a stale lock stalled the write or was not named: %s", env.warn.String())
	}
	_, problems, _ = m.Check(ctx, nil)
	if len(problems) != 2 || !strings.Contains(problems[1].What, "a stale lock") || !strings.Contains(problems[1].Repair, "rmdir "+lock) {
		t.Errorf("problems %+v", problems)
	}
	// Once the lock is gone, repair writes what was missed.
	os.Remove(lock)
	fixed := Repair(ctx, env.mem, ForStoreDir(env.storeDir), nil, Options{})
	if len(fixed) != 1 || !fixed[0].Fixed {
		t.Errorf("repair %+v", fixed)
	}
	if _, problems, _ := m.Check(ctx, nil); len(problems) != 0 {
		t.Errorf("after repair: %+v", problems)
	}
}

// A ccc mirror that selects every checkpoint (a list written before such
// entries were refused) would let each checkpoint overwrite the one
// .ccc-progress.md: it writes nothing, check reports it once with the
// command that binds it, and repair leaves the file of the one checkpoint
// alone instead of rewriting it for each in turn.
func TestUnboundCCCMirrorWritesNothingAndIsReported(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: ccc.Name, Root: "."})
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if _, err := m.Append(ctx, id, startEvent("Task "+id), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(env.path(ccc.ProgressFile)); !os.IsNotExist(err) {
		t.Errorf(".ccc-progress.md written by an unbound mirror: %v", err)
	}
	if w := env.warn.String(); strings.Count(w, "ckpt mirror add ccc --id ID") != 2 {
		t.Errorf("each write should warn once with the command that binds the mirror:\n%s", w)
	}
	_, problems, err := m.Check(ctx, nil)
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0].Repair, "ckpt mirror add ccc --id ID") {
		t.Fatalf("check: %+v %v", problems, err)
	}
	fixed := Repair(ctx, env.mem, ForStoreDir(env.storeDir), nil, Options{})
	if len(fixed) != 1 || fixed[0].Fixed {
		t.Errorf("repair cannot bind the mirror and must say so: %+v", fixed)
	}
	if _, err := ForStoreDir(env.storeDir).EntryFor(Spec{Format: ccc.Name, WorkDir: env.project}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("an unbound ccc mirror was accepted: %v", err)
	}
	if e, err := ForStoreDir(env.storeDir).EntryFor(Spec{Format: ccc.Name, WorkDir: env.project, ID: "a"}); err != nil || e.ID != "a" {
		t.Errorf("a ccc mirror of one checkpoint: %+v %v", e, err)
	}
}
