package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

// The cases of the v2 contract: paging, time filters, bounded history,
// clamped clocks, the change feed and Update.

func testListPaging(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	var want []string
	for i := range 11 {
		id := fmt.Sprintf("page/%02d", i)
		st := ckpt.StatusInProgress
		if i%3 == 0 {
			st = ckpt.StatusDone
		}
		create(t, s, id, ckpt.Created{Patch: ckpt.Patch{Status: ptr(st)}})
		if i%3 != 0 {
			want = append(want, id)
		}
	}
	create(t, s, "other", ckpt.Created{})
	f := ckpt.Filter{Prefix: "page/", Status: []ckpt.Status{ckpt.StatusInProgress}}
	for _, limit := range []int{1, 2, 3, 7, 100} {
		var got []string
		opts := ckpt.ListOptions{Filter: f, Limit: limit}
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("limit %d: paging does not end", limit)
			}
			p, err := s.List(ctx, opts)
			if err != nil {
				t.Fatalf("limit %d: List: %v", limit, err)
			}
			if len(p.Items) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(p.Items))
			}
			if p.Next != "" && len(p.Items) == 0 {
				t.Fatalf("limit %d: an empty page with a next cursor", limit)
			}
			for _, it := range p.Items {
				got = append(got, it.ID)
			}
			if p.Next == "" {
				break
			}
			opts.After = p.Next
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("limit %d: paged listing (-want +got):\n%s", limit, d)
		}
	}
	p, err := s.List(ctx, ckpt.ListOptions{Filter: f})
	if err != nil || len(p.Items) != len(want) || p.Next != "" {
		t.Errorf("List with no limit: %d items, next %q, %v; want all %d on one page", len(p.Items), p.Next, err, len(want))
	}
}

func testListTimeFilters(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	create(t, s, "t/early", ckpt.Created{}) // updated at(0)
	create(t, s, "t/late", ckpt.Created{})
	mustAppend(t, s, "t/late", note(100, "later")) // updated at(100)
	create(t, s, "t/beaten", ckpt.Created{})
	if err := s.Beat(ctx, "t/beaten", ckpt.Signal{At: at(200)}); err != nil {
		t.Fatal(err)
	}
	ids := func(f ckpt.Filter) []string {
		f.Prefix = "t/"
		all, err := ckpt.ListAll(ctx, s, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range all {
			out = append(out, c.ID)
		}
		return out
	}
	if d := cmp.Diff([]string{"t/late"}, ids(ckpt.Filter{UpdatedSince: at(50)})); d != "" {
		t.Errorf("UpdatedSince (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"t/early"}, ids(ckpt.Filter{SeenBefore: at(50)})); d != "" {
		t.Errorf("SeenBefore counts beats and updates (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"t/early", "t/late"}, ids(ckpt.Filter{SeenBefore: at(150)})); d != "" {
		t.Errorf("SeenBefore (-want +got):\n%s", d)
	}
}

func testHistoryLimit(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	create(t, s, "hl", ckpt.Created{})
	for i := 1; i < 10; i++ {
		mustAppend(t, s, "hl", note(i, fmt.Sprint(i)))
	}
	for _, tc := range []struct {
		from       int64
		limit      int
		first, len int64
	}{{1, 3, 1, 3}, {4, 3, 4, 3}, {9, 3, 9, 2}, {11, 3, 0, 0}, {2, 0, 2, 9}} {
		h, err := s.History(ctx, "hl", tc.from, tc.limit)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(h)) != tc.len || len(h) > 0 && h[0].Seq != tc.first {
			t.Errorf("History(from %d, limit %d): %d events from %v; want %d from %d", tc.from, tc.limit, len(h), firstSeq(h), tc.len, tc.first)
		}
	}
}

func firstSeq(h []ckpt.Event) any {
	if len(h) == 0 {
		return "-"
	}
	return h[0].Seq
}

// testClockSkew checks that one client clock far ahead cannot keep an agent
// alive: beats and event times are clamped, and beats never go back.
func testClockSkew(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	create(t, s, "skew", ckpt.Created{})
	before := time.Now()
	if err := s.Beat(ctx, "skew", ckpt.Signal{At: before.Add(100 * 365 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	beat := mustGet(t, s, "skew").Heartbeat.LastBeat
	if beat.After(time.Now().Add(ckpt.MaxClockSkew)) || beat.Before(before.Add(-time.Second)) {
		t.Errorf("a beat a century ahead was recorded as %v; want the store's now (about %v)", beat, before)
	}
	if err := s.Beat(ctx, "skew", ckpt.Signal{At: before.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, "skew").Heartbeat.LastBeat; got.Before(beat.Add(-time.Millisecond)) {
		t.Errorf("an older beat moved last_beat back from %v to %v", beat, got)
	}
	e := ckpt.MustEvent(ckpt.EventNote, before.Add(50*365*24*time.Hour), actor, ckpt.Note{Text: "from the future"})
	r := mustAppend(t, s, "skew", e)
	if r.Event.At.After(time.Now().Add(ckpt.MaxClockSkew)) {
		t.Errorf("an event half a century ahead was stored at %v", r.Event.At)
	}
	if c := mustGet(t, s, "skew"); c.UpdatedAt.After(time.Now().Add(ckpt.MaxClockSkew)) {
		t.Errorf("updated_at %v is in the future", c.UpdatedAt)
	}
}

// testUpdateConcurrent runs many read-modify-writes of one checkpoint at
// once without the caller giving a revision: none may be lost.
func testUpdateConcurrent(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	create(t, s, "upd", ckpt.Created{})
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := ckpt.Update(ctx, s, "upd", func(c *ckpt.Checkpoint) (ckpt.Event, error) {
				return ckpt.MustEvent(ckpt.EventNote, at(int(c.Rev)), actor, ckpt.Note{Text: fmt.Sprint(i)}), nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			if !errors.Is(err, ckpt.ErrConflict) {
				t.Errorf("Update: %v", err)
			}
		}
	}
	if c := mustGet(t, s, "upd"); c.Rev != int64(n-failed+1) {
		t.Errorf("after %d updates (%d gave up on conflicts) the revision is %d", n, failed, c.Rev)
	}
	if failed > n/2 {
		t.Errorf("%d of %d updates gave up: Update retries too little", failed, n)
	}
	r, err := ckpt.Update(ctx, s, "upd", func(*ckpt.Checkpoint) (ckpt.Event, error) { return ckpt.Event{}, ckpt.ErrNoChange })
	if err != nil || r.State == nil || r.State.Rev != mustGet(t, s, "upd").Rev {
		t.Errorf("Update with ErrNoChange: %v, %+v; want the state as read", err, r)
	}
}

// testPresence checks that a beat carries the client's presence: the state
// and its reason, the time it began, the process; plain beats keep them.
func testPresence(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	create(t, s, "pres", ckpt.Created{})
	if p := mustGet(t, s, "pres").Heartbeat.Presence; p != nil {
		t.Errorf("presence %+v before any signal, want none", p)
	}
	proc := &ckpt.Process{Host: "h1", PID: 4242, Start: "12345"}
	t1 := time.Now().Add(-time.Minute).Truncate(time.Second)
	if err := s.Beat(ctx, "pres", ckpt.Signal{At: t1, State: ckpt.PresenceBusy, Reason: "Bash", Process: proc, Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	proc.PID = 1 // the store keeps its own copy
	if err := s.Beat(ctx, "pres", ckpt.Signal{At: t1.Add(10 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	want := &ckpt.Presence{State: ckpt.PresenceBusy, Since: t1, At: t1, Reason: "Bash", Process: &ckpt.Process{Host: "h1", PID: 4242, Start: "12345"}, Bound: t1, Session: "s1"}
	c := mustGet(t, s, "pres")
	if d := cmp.Diff(want, c.Heartbeat.Presence); d != "" {
		t.Errorf("presence after a busy signal and a plain beat (-want +got):\n%s", d)
	}
	if !c.Heartbeat.LastBeat.Equal(t1.Add(10 * time.Second)) {
		t.Errorf("last beat %v, want the plain beat's", c.Heartbeat.LastBeat)
	}
	listed, err := ckpt.ListAll(ctx, s, ckpt.Filter{Prefix: "pres"})
	if err != nil || len(listed) != 1 {
		t.Fatalf("List: %v", err)
	}
	if d := cmp.Diff(want, listed[0].Heartbeat.Presence); d != "" {
		t.Errorf("listed presence (-want +got):\n%s", d)
	}
	t2 := t1.Add(20 * time.Second)
	if err := s.Beat(ctx, "pres", ckpt.Signal{At: t2, State: ckpt.PresenceWaiting, Reason: "permission"}); err != nil {
		t.Fatal(err)
	}
	if p := mustGet(t, s, "pres").Heartbeat.Presence; p == nil || p.State != ckpt.PresenceWaiting || !p.Since.Equal(t2) || p.Reason != "permission" || p.Process == nil || p.Process.PID != 4242 {
		t.Errorf("after waiting: %+v", p)
	}
	// Ended holds against the late beat of its own session (StopFailure
	// after SessionEnd); a new session replaces it.
	t3 := t2.Add(10 * time.Second)
	for i, sig := range []ckpt.Signal{
		{At: t3, State: ckpt.PresenceEnded, Reason: "session ended (other)", Session: "s1"},
		{At: t3.Add(time.Second), State: ckpt.PresenceWaiting, Reason: "turn failed: 529", Session: "s1"},
		{At: t3.Add(2 * time.Second), State: ckpt.PresenceWaiting, Reason: "CI run", For: ckpt.WaitsThing, Session: "s2"},
	} {
		if err := s.Beat(ctx, "pres", sig); err != nil {
			t.Fatal(err)
		}
		p := mustGet(t, s, "pres").Heartbeat.Presence
		switch {
		case i < 2 && (p == nil || p.State != ckpt.PresenceEnded || !p.At.Equal(t3) || p.Session != "s1"):
			t.Errorf("after signal %d the record is %+v; want ended at %v by s1", i, p, t3)
		case i == 2 && (p == nil || p.State != ckpt.PresenceWaiting || p.For != ckpt.WaitsThing || p.Session != "s2"):
			t.Errorf("a new session's signal left %+v; want waiting for a thing by s2", p)
		}
	}
	unchanged(t, s, "pres", 1)
	wantErr(t, "Beat of a missing checkpoint with a state", s.Beat(ctx, "pres-missing", ckpt.Signal{State: ckpt.PresenceEnded}), ckpt.ErrNotFound)
}
