package filestore

import (
	"context"
	"errors"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestListReturnsTheReadableCheckpointsAndNamesTheDamagedOnes: one damaged
// history must not hide every other checkpoint from ls, status or a monitor.
// A page that stats each checkpoint (ckpt ls's table of 50) names the
// damaged one; a full listing trusts the settled view (see trustView) and
// lists it from the journal, like a checkpoint that beats, until check
// reports the damage.
func TestListReturnsTheReadableCheckpointsAndNamesTheDamagedOnes(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	at := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	for _, id := range []string{"a", "b", "c"} {
		for _, e := range []ckpt.Event{
			ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{}, nil),
			ckpt.MustEvent(ckpt.EventNote, at, ckpt.Actor{}, ckpt.Note{Text: "second line"}),
		} {
			if _, err := s.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	damage(t, s, "b")
	s = reopen(t, s)

	page, err := s.List(ctx, ckpt.ListOptions{Limit: ckpt.DefaultPageSize})
	list := page.Items
	var damaged *ckpt.DamagedError
	if !errors.As(err, &damaged) || !errors.Is(err, ckpt.ErrCorrupt) {
		t.Fatalf("List error %v, want a *ckpt.DamagedError wrapping ErrCorrupt", err)
	}
	if len(damaged.IDs) != 1 || damaged.IDs[0] != "b" || damaged.Err == nil {
		t.Fatalf("damaged %+v, want b", damaged)
	}
	if len(list) != 2 || list[0].ID != "a" || list[1].ID != "c" {
		t.Fatalf("List returned %d checkpoints, want a and c", len(list))
	}
	if all, err := ckpt.ListAll(ctx, s, ckpt.Filter{}); err != nil || len(all) != 3 {
		t.Fatalf("a full listing: %d checkpoints, %v; want all three from the journal", len(all), err)
	}
	if r, err := s.Check(ctx, nil); err != nil || r.Errors() == 0 {
		t.Fatalf("check after the damage: %+v, %v; want b's damage reported", r, err)
	}
}

// reopen closes s and opens its directory again, so no in-process memory of
// the last write hides the damage.
func reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s2
}
