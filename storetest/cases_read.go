package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

func testGetRevision(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "revs"
	var states []*ckpt.Checkpoint
	states = append(states, mustAppend(t, s, id, created("r")).State)
	for i := 1; i < 6; i++ {
		states = append(states, mustAppend(t, s, id, event(i, ckpt.EventStep, ckpt.StepChange{ID: fmt.Sprintf("s%d", i), Status: ckpt.StepDone})).State)
	}
	for i, want := range states {
		got, err := s.Get(ctx, id, int64(i+1))
		if err != nil {
			t.Fatalf("Get revision %d: %v", i+1, err)
		}
		if d := diffState(want, got); d != "" {
			t.Errorf("Get revision %d differs from the state Append returned then (-append +get):\n%s", i+1, d)
		}
	}
	if _, err := s.Get(ctx, id, 7); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("Get past the last revision: %v, want ErrNotFound", err)
	}
}

func testHistoryFrom(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "hist"
	var appended []ckpt.Event
	appended = append(appended, mustAppend(t, s, id, keyed(created("h"), "k0")).Event)
	for i := 1; i < 5; i++ {
		appended = append(appended, mustAppend(t, s, id, note(i, fmt.Sprintf("n%d", i))).Event)
	}
	for _, from := range []int64{0, 1, 3, 5, 6, 100} {
		h, err := s.History(ctx, id, from, 0)
		if err != nil {
			t.Fatalf("History from %d: %v", from, err)
		}
		want := appended[min(max(from-1, 0), int64(len(appended))):]
		if d := cmp.Diff(want, h, eventOpts); d != "" {
			t.Errorf("History from %d (-want +got):\n%s", from, d)
		}
	}
	if _, err := s.History(ctx, "hist-missing", 0, 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("History of a missing checkpoint: %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	mk := func(id string, p ckpt.Patch) {
		create(t, s, id, ckpt.Created{Patch: p})
	}
	mk("p/a", ckpt.Patch{Agent: &ckpt.Agent{ID: "kai-1", Name: "Alpha"}, Parent: ptr("plan"), AddLabels: []string{"red", "blue"}})
	mk("p/b", ckpt.Patch{Agent: &ckpt.Agent{ID: "kai-2", Name: "Beta"}, Parent: ptr("plan"), Status: ptr(ckpt.StatusWaiting)})
	mk("q/c", ckpt.Patch{Agent: &ckpt.Agent{ID: "kai-1", Name: "Alpha"}, Status: ptr(ckpt.StatusDone), AddLabels: []string{"blue"}})
	mk("q/d", ckpt.Patch{Agent: &ckpt.Agent{ID: "kai-3"}, Status: ptr(ckpt.StatusBlocked)})
	mk("pz", ckpt.Patch{Status: ptr(ckpt.StatusPending)})
	mk("old", ckpt.Patch{Agent: &ckpt.Agent{ID: "kai-1"}, AddLabels: []string{"blue"}})
	mustAppend(t, s, "old", event(1, ckpt.EventArchived, ckpt.Archive{Reason: "complete"}))
	mustAppend(t, s, "p/b", note(2, "later"))

	tests := []struct {
		name string
		f    ckpt.Filter
		want []string
	}{
		{"zero filter hides archived", ckpt.Filter{}, []string{"p/a", "p/b", "pz", "q/c", "q/d"}},
		{"include archived", ckpt.Filter{IncludeArchived: true}, []string{"old", "p/a", "p/b", "pz", "q/c", "q/d"}},
		{"one status", ckpt.Filter{Status: []ckpt.Status{ckpt.StatusDone}}, []string{"q/c"}},
		{"any of statuses", ckpt.Filter{Status: []ckpt.Status{ckpt.StatusWaiting, ckpt.StatusBlocked}}, []string{"p/b", "q/d"}},
		{"agent by ID", ckpt.Filter{Agent: "kai-1"}, []string{"p/a", "q/c"}},
		{"agent by name", ckpt.Filter{Agent: "Beta"}, []string{"p/b"}},
		{"agent archived too", ckpt.Filter{Agent: "kai-1", IncludeArchived: true}, []string{"old", "p/a", "q/c"}},
		{"parent", ckpt.Filter{Parent: "plan"}, []string{"p/a", "p/b"}},
		{"label", ckpt.Filter{Label: "blue"}, []string{"p/a", "q/c"}},
		{"prefix", ckpt.Filter{Prefix: "p/"}, []string{"p/a", "p/b"}},
		{"prefix without slash", ckpt.Filter{Prefix: "p"}, []string{"p/a", "p/b", "pz"}},
		{"fields combine", ckpt.Filter{Agent: "kai-1", Label: "blue", Prefix: "q/"}, []string{"q/c"}},
		{"no match", ckpt.Filter{Label: "green"}, nil},
	}
	for _, tc := range tests {
		got, err := ckpt.ListAll(ctx, s, tc.f)
		if err != nil {
			t.Fatalf("List %s: %v", tc.name, err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if d := cmp.Diff(tc.want, ids, eventOpts); d != "" {
			t.Errorf("List %s (-want +got):\n%s", tc.name, d)
		}
	}
	all, err := ckpt.ListAll(ctx, s, ckpt.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		c := &all[i]
		if d := diffSummary(mustGet(t, s, c.ID), c); d != "" {
			t.Errorf("List entry %s differs from Get (-get +list):\n%s", c.ID, d)
		}
	}
}

func testListEmpty(t *testing.T, s ckpt.Store) {
	got, err := ckpt.ListAll(context.Background(), s, ckpt.Filter{IncludeArchived: true})
	if err != nil || len(got) != 0 {
		t.Errorf("List of an empty store: %d checkpoints, %v; want none", len(got), err)
	}
}

// testNestedIDs checks that IDs that are prefixes of each other, or that
// differ only where another ID has a '/', are distinct checkpoints.
func testNestedIDs(t *testing.T, s ckpt.Store) {
	ids := []string{"kai-7", "kai-7/a", "kai-7/a/b", "kai-7.a", "kai-7-a", "kai-7_a", "a.b/c", "a/b.c", "...x/..y"}
	for i, id := range ids {
		create(t, s, id, ckpt.Created{Patch: ckpt.Patch{Title: ptr(fmt.Sprint(i))}})
	}
	for i, id := range ids {
		if c := mustGet(t, s, id); c.ID != id || c.Title != fmt.Sprint(i) || c.Rev != 1 {
			t.Errorf("Get(%s) = %s %q rev %d, want its own checkpoint", id, c.ID, c.Title, c.Rev)
		}
	}
	got, err := ckpt.ListAll(context.Background(), s, ckpt.Filter{})
	if err != nil || len(got) != len(ids) {
		t.Fatalf("List: %d checkpoints, %v; want %d", len(got), err, len(ids))
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].ID >= got[i].ID {
			t.Errorf("List is not ordered by ID: %s before %s", got[i-1].ID, got[i].ID)
		}
	}
}

var invalidIDs = []string{"", "../x", "..", ".", "a//b", "/abs", "trailing/", "a/./b", "a/../b", "x y", "a\\b", "é", "a\x00b", strings.Repeat("x", ckpt.MaxIDLen+1)}

func testInvalidIDs(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	for _, id := range invalidIDs {
		_, err := s.Append(ctx, id, created("bad"), ckpt.AppendOptions{})
		wantErr(t, fmt.Sprintf("Append(%q)", id), err, ckpt.ErrInvalid)
		_, err = s.Get(ctx, id, 0)
		wantErr(t, fmt.Sprintf("Get(%q)", id), err, ckpt.ErrInvalid)
		_, err = s.History(ctx, id, 0, 0)
		wantErr(t, fmt.Sprintf("History(%q)", id), err, ckpt.ErrInvalid)
		wantErr(t, fmt.Sprintf("Beat(%q)", id), s.Beat(ctx, id, ckpt.Signal{At: time.Now()}), ckpt.ErrInvalid)
		wantErr(t, fmt.Sprintf("Delete(%q)", id), s.Delete(ctx, id), ckpt.ErrInvalid)
	}
	if got, err := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true}); err != nil || len(got) != 0 {
		t.Errorf("after invalid IDs the store lists %d checkpoints (%v), want none", len(got), err)
	}
	// The longest valid ID works.
	long := strings.Repeat("x", ckpt.MaxIDLen)
	create(t, s, long, ckpt.Created{})
	mustGet(t, s, long)
}

func testNotFound(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	create(t, s, "present", ckpt.Created{})
	id := "absent"
	_, err := s.Append(ctx, id, note(1, "x"), ckpt.AppendOptions{})
	wantErr(t, "Append to a missing checkpoint", err, ckpt.ErrNotFound)
	_, err = s.Get(ctx, id, 0)
	wantErr(t, "Get", err, ckpt.ErrNotFound)
	_, err = s.Get(ctx, id, 1)
	wantErr(t, "Get revision 1", err, ckpt.ErrNotFound)
	_, err = s.History(ctx, id, 0, 0)
	wantErr(t, "History", err, ckpt.ErrNotFound)
	wantErr(t, "Beat", s.Beat(ctx, id, ckpt.Signal{At: time.Now()}), ckpt.ErrNotFound)
	wantErr(t, "Delete", s.Delete(ctx, id), ckpt.ErrNotFound)
	if got, err := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true}); err != nil || len(got) != 1 {
		t.Errorf("List after misses: %d checkpoints, %v; want only present", len(got), err)
	}
}

func testBeat(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "beating"
	create(t, s, id, ckpt.Created{})
	mustAppend(t, s, id, note(1, "n"))
	if c := mustGet(t, s, id); !c.Heartbeat.LastBeat.IsZero() {
		t.Errorf("LastBeat is %v before any beat, want zero", c.Heartbeat.LastBeat)
	}
	// Whole seconds, so that any backend's time resolution keeps them.
	for _, when := range []time.Time{time.Now().Add(-time.Minute).Truncate(time.Second), time.Now().Add(ckpt.MaxClockSkew / 2).Truncate(time.Second)} {
		if err := s.Beat(ctx, id, ckpt.Signal{At: when}); err != nil {
			t.Fatalf("Beat: %v", err)
		}
		c := mustGet(t, s, id)
		if !c.Heartbeat.LastBeat.Equal(when) {
			t.Errorf("LastBeat = %v, want %v", c.Heartbeat.LastBeat, when)
		}
		if !c.LastSeen().Equal(when) && when.After(c.UpdatedAt) {
			t.Errorf("LastSeen = %v, want the beat %v", c.LastSeen(), when)
		}
		unchanged(t, s, id, 2)
		listed, err := ckpt.ListAll(ctx, s, ckpt.Filter{Prefix: id})
		if err != nil || len(listed) != 1 || !listed[0].Heartbeat.LastBeat.Equal(when) {
			t.Errorf("List does not carry the beat %v: %v", when, err)
		}
	}
	// An update after a beat keeps the beat.
	mustAppend(t, s, id, note(2, "after beat"))
	if c := mustGet(t, s, id); c.Heartbeat.LastBeat.IsZero() {
		t.Error("an update cleared the last beat")
	}
}

// testConcurrentBeats: beats racing on one checkpoint (several processes
// of one agent, hooks and a beat loop) each build on the last one, so
// the beat that stays is the latest, whatever order they land in.
func testConcurrentBeats(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "beats-race"
	create(t, s, id, ckpt.Created{})
	base := time.Now().Add(-3 * time.Minute).Truncate(time.Second)
	const writers, beats = 8, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for k := range beats {
				if err := s.Beat(ctx, id, ckpt.Signal{At: base.Add(time.Duration(k*writers+w) * time.Second)}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	latest := base.Add((writers*beats - 1) * time.Second)
	if c := mustGet(t, s, id); !c.Heartbeat.LastBeat.Equal(latest) {
		t.Errorf("after racing beats LastBeat = %v, want the latest, %v", c.Heartbeat.LastBeat, latest)
	}
	unchanged(t, s, id, 1)
}

func testDelete(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "doomed"
	create(t, s, id, ckpt.Created{Patch: ckpt.Patch{Title: ptr("first life")}})
	if err := s.Beat(ctx, id, ckpt.Signal{At: time.Now()}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Delete of a live checkpoint", s.Delete(ctx, id), ckpt.ErrInvalid)
	unchanged(t, s, id, 1)
	mustAppend(t, s, id, event(1, ckpt.EventArchived, ckpt.Archive{Reason: "complete"}))
	if err := s.Delete(ctx, id); err != nil {
		t.Fatalf("Delete of an archived checkpoint: %v", err)
	}
	if _, err := s.Get(ctx, id, 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("Get after Delete: %v, want ErrNotFound", err)
	}
	if _, err := s.History(ctx, id, 0, 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("History after Delete: %v, want ErrNotFound", err)
	}
	if got, _ := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true}); len(got) != 0 {
		t.Errorf("List after Delete shows %d checkpoints", len(got))
	}
	// The ID can be used again, with a fresh history and no old beat.
	res := mustAppend(t, s, id, created("second life"))
	if res.Event.Seq != 1 || res.Event.Prev != "" {
		t.Errorf("re-created checkpoint starts at seq %d prev %q, want 1 and none", res.Event.Seq, res.Event.Prev)
	}
	if c := mustGet(t, s, id); c.Title != "second life" || !c.Heartbeat.LastBeat.IsZero() {
		t.Errorf("re-created checkpoint has title %q and beat %v, want second life and no beat", c.Title, c.Heartbeat.LastBeat)
	}
}

func testResultsAreCopies(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "copies"
	res := mustAppend(t, s, id, event(0, ckpt.EventCreated, ckpt.Created{Patch: ckpt.Patch{Title: ptr("orig"), AddLabels: []string{"l"}}}))
	res.State.Title, res.State.Labels[0] = "changed", "changed"
	res.Event.Data[0] = 'X'
	c := mustGet(t, s, id)
	c.Title = "changed too"
	h := mustHistory(t, s, id)
	h[0].Data[0] = 'Y'
	listed, _ := ckpt.ListAll(ctx, s, ckpt.Filter{})
	listed[0].Labels[0] = "changed"
	if c := mustGet(t, s, id); c.Title != "orig" || c.Labels[0] != "l" {
		t.Errorf("changing returned values changed the store: title %q labels %v", c.Title, c.Labels)
	}
	if h := mustHistory(t, s, id); h[0].Data[0] != '{' {
		t.Errorf("changing a returned event changed the stored history: %s", h[0].Data)
	}
}
