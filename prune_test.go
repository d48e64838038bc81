package ckpt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestPruneRemovesOnlyOldArchives: prune deletes the checkpoints archived
// longer ago than its age, within its prefix, and nothing else; a dry run
// deletes nothing and says the same.
func TestPruneRemovesOnlyOldArchives(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	create := func(id string) {
		t.Helper()
		e := ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{})
		if _, err := s.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	archive := func(id string, at time.Time) {
		t.Helper()
		create(id)
		if _, _, err := ckpt.ArchiveCheckpoint(ctx, s, id, "complete", ckpt.Lifecycle{At: at, Force: true}); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(60 * 24 * time.Hour)
	archive("a/old", t0)
	archive("b/old", t0)
	archive("a/recent", now.Add(-time.Hour))
	create("a/live")
	ids := func() (out []string) {
		all, err := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range all {
			out = append(out, c.ID)
		}
		return out
	}
	opts := ckpt.PruneOptions{OlderThan: 30 * 24 * time.Hour, Prefix: "a/", DryRun: true, Now: now}
	dry, err := ckpt.Prune(ctx, s, opts)
	if err != nil || len(dry) != 1 || dry[0].ID != "a/old" || dry[0].Removed || dry[0].Reason != "complete" || !dry[0].ArchivedAt.Equal(t0) {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	if got := ids(); len(got) != 4 {
		t.Fatalf("a dry run deleted: %v", got)
	}
	opts.DryRun = false
	done, err := ckpt.Prune(ctx, s, opts)
	if err != nil || len(done) != 1 || done[0].ID != "a/old" || !done[0].Removed {
		t.Fatalf("prune: %+v, %v", done, err)
	}
	if got := ids(); len(got) != 3 || got[0] != "a/live" || got[1] != "a/recent" || got[2] != "b/old" {
		t.Errorf("after the prune: %v; want a/live a/recent b/old", got)
	}
	if _, err := ckpt.Prune(ctx, s, ckpt.PruneOptions{Now: now}); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("no age: %v, want ErrInvalid", err)
	}
}
