package plan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

func TestSyncStoreStoresThenFindsThePlan(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	path := newPlan(t, "feature-x", samplePlan)
	work := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	o := SyncStoreOptions{Plan: "plans/feature-x/plan.md", Path: path, By: "main", Now: t0, Actor: ckpt.Actor{Agent: "kai"}}
	rep, err := SyncStore(ctx, st, o)
	if err != nil || !rep.Stored || rep.ID != "feature-x" || rep.Rev != 1 || rep.State == nil || len(rep.History) == 0 || rep.NewlyCompleted == nil {
		t.Fatalf("first sync: %v %+v", err, rep)
	}
	if text := rep.Text(); !strings.HasPrefix(text, "synced plans/feature-x/plan.md: feature-x  rev 1  imported  (") || !strings.HasSuffix(text, "\n  wrote recovery.json (checkpoint_created)\n") {
		t.Errorf("first sync's text:\n%s", text)
	}
	if rep, err = SyncStore(ctx, st, o); err != nil || rep.Stored || rep.Rev != 1 {
		t.Fatalf("a sync of an unchanged plan stores nothing: %v %+v", err, rep)
	}
	if text := rep.Text(); !strings.HasPrefix(text, "synced plans/feature-x/plan.md: feature-x unchanged at rev 1  (") || strings.Count(text, "\n") != 1 {
		t.Errorf("an unchanged sync's text:\n%s", text)
	}
	// Find: the plan the checkpoint was synced from, from the project.
	if got, err := Find(ctx, st, work, "feature-x"); err != nil || got != path {
		t.Fatalf("Find by the checkpoint = %q, %v", got, err)
	}
	// With no checkpoint to ask, the one plans/*/plan.md.
	if got, err := Find(ctx, st, work, "unknown"); err != nil || got != filepath.Join("plans", "feature-x", "plan.md") {
		t.Fatalf("Find by the only plan = %q, %v", got, err)
	}
	if _, err := Find(ctx, st, t.TempDir(), ""); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("Find with no plan: %v", err)
	}
	o.Path = filepath.Join(work, "nope.md")
	if _, err := SyncStore(ctx, st, o); !errors.Is(err, ckpt.ErrNotFound) {
		t.Fatalf("a plan that does not exist: %v", err)
	}
}

func TestSyncStoreKeepsTheLastStateOfAnUnreadablePlan(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	path := newPlan(t, "p", samplePlan)
	o := SyncStoreOptions{Plan: path, Path: path, By: "main", Now: t0}
	if _, err := SyncStore(ctx, st, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("- [x] a \xff\xfe <!-- TASK: a -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := SyncStore(ctx, st, o)
	if err != nil || rep.PlanError == "" || rep.Stored || rep.State != nil {
		t.Fatalf("%v %+v", err, rep)
	}
	if text := rep.Text(); text != "kept the last known state of "+path+": nothing stored\n" {
		t.Errorf("text %q", text)
	}
}

func TestCheckBy(t *testing.T) {
	for _, ok := range []string{"main", "subagent:fullstack", "team:a.b"} {
		if CheckBy("--by", ok) != nil {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "subagent:", "someone", "team:a b"} {
		if err := CheckBy("--by", bad); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
