package filestore

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/storetest"
)

// listIDs lists every checkpoint (archived too) and returns id → rev.
func listIDs(t *testing.T, s *Store) map[string]int64 {
	t.Helper()
	all, err := ckpt.ListAll(context.Background(), s, ckpt.Filter{IncludeArchived: true})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	out := map[string]int64{}
	for _, sum := range all {
		out[sum.ID] = sum.Rev
	}
	return out
}

// checkProblems returns the problems Check reports about the journal.
func checkProblems(t *testing.T, s *Store) []ckpt.Problem {
	t.Helper()
	r, err := s.Check(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []ckpt.Problem
	for _, p := range r.Problems {
		if strings.Contains(p.What, "journal") {
			out = append(out, p)
		}
	}
	return out
}

// TestListServesTheIndex proves List does not read a current checkpoint's
// state file: garbage in state.json (same history) still lists the right
// summary, and equals Get (which replays the history past the garbage).
func TestListServesTheIndex(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "i/a", createEvent())
	appendOK(t, s, "i/a", noteEvent("one"))
	if err := os.WriteFile(s.files("i/a").state(), []byte("not an envelope"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s); got["i/a"] != 2 {
		t.Errorf("List: %v, want i/a at 2", got)
	}
	storetest.Verify(t, s)
}

// TestListNoticesAStaleIndexEntry appends an event to a history behind the
// journal's back (as a writer killed before journaling whose marker a
// machine crash lost): a short page (ckpt ls's table) reads that
// checkpoint from its files; a full listing, which trusts the settled
// view of every checkpoint (see trustView), shows the journal's revision
// until check reports the gap and repair journals it.
func TestListNoticesAStaleIndexEntry(t *testing.T) {
	s := newStore(t, Options{})
	res := appendOK(t, s, "i/a", createEvent())
	e := noteEvent("behind the journal's back")
	e.Seq, e.Prev = 2, res.Event.Sum
	line, _, err := ckpt.EncodeLine(e)
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.OpenFile(s.files("i/a").history(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.Write(line)
	h.Close()
	s = reopen(t, s)
	if p, err := s.List(context.Background(), ckpt.ListOptions{Limit: ckpt.DefaultPageSize}); err != nil || len(p.Items) != 1 || p.Items[0].Rev != 2 {
		t.Errorf("a short page after an unjournaled event: %+v, %v; want i/a at 2", p.Items, err)
	}
	if got := listIDs(t, s); got["i/a"] != 1 {
		t.Errorf("a full listing after an unjournaled event: %v, want i/a at 1 (the journal's) until a repair", got)
	}
	if ps := checkProblems(t, s); len(ps) != 1 || ps[0].ID != "i/a" {
		t.Errorf("Check: %+v, want one warning: the journal stops short of i/a", ps)
	}
	r, err := s.Repair(context.Background(), nil)
	if err != nil || r.Errors() > 0 {
		t.Fatalf("Repair: %v %+v", err, r)
	}
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("Check after Repair: %+v", ps)
	}
	if got := listIDs(t, s); got["i/a"] != 2 {
		t.Errorf("a full listing after repair: %v, want i/a at 2", got)
	}
	got := watchN(t, s, "", 2)
	if got[1].ID != "i/a" || got[1].Rev != 2 {
		t.Errorf("the feed after repair: %+v", got)
	}
}

// TestRepairIndexesCheckpointsMadeByHand copies a checkpoint's files by
// hand: it is not listed (the index does not know it) and check says so;
// repair journals it, and then it is listed and in the feed.
func TestRepairIndexesCheckpointsMadeByHand(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "h/a", createEvent())
	appendOK(t, s, "h/a", noteEvent("one"))
	src, dst := s.files("h/a"), s.files("h/copy")
	if err := os.MkdirAll(dst.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hist, _ := os.ReadFile(src.history())
	os.WriteFile(dst.history(), hist, 0o644)
	if got := listIDs(t, s); len(got) != 1 {
		t.Errorf("List before repair: %v, want only h/a (the index is a cache)", got)
	}
	ps := checkProblems(t, s)
	if len(ps) != 1 || ps[0].ID != "h/copy" || ps[0].Severity != ckpt.SeverityWarning {
		t.Fatalf("Check: %+v, want a warning that h/copy is not journaled", ps)
	}
	if _, err := s.Repair(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s); got["h/copy"] != 2 {
		t.Errorf("List after repair: %v, want h/copy at 2", got)
	}
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("Check after Repair: %+v", ps)
	}
	storetest.Verify(t, s)
}

// TestRepairRebuildsADamagedIndex: a garbage index makes List fall back to
// the files (still right), check warn and repair rebuild it; the feed then
// restarts after a gap, so an old cursor is refused rather than misread.
func TestRepairRebuildsADamagedIndex(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "d/a", createEvent())
	appendOK(t, s, "d/b", createEvent())
	old := watchN(t, s, "", 2)[1].Cursor
	if err := os.WriteFile(s.journal().index(), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s); len(got) != 2 {
		t.Errorf("List with a damaged index: %v, want both", got)
	}
	if ps := checkProblems(t, s); len(ps) != 1 {
		t.Fatalf("Check: %+v, want one warning about the index", ps)
	}
	if _, err := s.Repair(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("Check after Repair: %+v", ps)
	}
	if err := s.Watch(context.Background(), old, func(ckpt.Change) error { return nil }); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Watch from a cursor before the rebuild: %v, want ErrInvalid", err)
	}
	appendOK(t, s, "d/a", noteEvent("after"))
	if got := watchN(t, s, "", 1); got[0].ID != "d/a" || got[0].Rev != 2 {
		t.Errorf("feed after the rebuild: %+v", got)
	}
	storetest.Verify(t, s)
}

// TestJournalCompactsAndPrunes makes segments and the compaction threshold
// small: listing folds the journal into the index and prunes old segments
// (keeping keepSegments); a pruned cursor is refused, a kept one resumes
// with every later change in order.
func TestJournalCompactsAndPrunes(t *testing.T) {
	defer func(seg int64, lines, keep int) { segmentMax, compactLines, keepSegments = seg, lines, keep }(segmentMax, compactLines, keepSegments)
	segmentMax, compactLines, keepSegments = 2048, 20, 2
	s := newStore(t, Options{})
	appendOK(t, s, "p/a", createEvent())
	first := watchN(t, s, "", 1)[0]
	for i := range 80 {
		appendOK(t, s, "p/a", noteEvent(strconv.Itoa(i)))
	}
	if got := listIDs(t, s); got["p/a"] != 81 {
		t.Fatalf("List: %v", got)
	}
	segs, err := s.journal().segments()
	if err != nil {
		t.Fatal(err)
	}
	sn, err := s.journal().readSnapshot()
	if err != nil || sn == nil {
		t.Fatal(err)
	}
	sn.close()
	var kept int
	for _, sg := range segs {
		if !sg.active && sg.start+fileSizeOr0(sg.path) <= sn.pos {
			kept++
		}
	}
	if kept != keepSegments || segs[0].start == 0 {
		t.Errorf("after compaction: %d segments before the index's position, first at %d; want %d and the first pruned", kept, segs[0].start, keepSegments)
	}
	if err := s.Watch(context.Background(), first.Cursor, func(ckpt.Change) error { return nil }); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("Watch from a pruned cursor: %v, want ErrInvalid", err)
	}
	rest := watchN(t, s, "", 1)
	n := int(81 - rest[0].Rev + 1)
	all := watchN(t, s, "", n)
	for i, c := range all {
		if c.Rev != rest[0].Rev+int64(i) {
			t.Fatalf("change %d from the oldest kept: rev %d, want %d", i, c.Rev, rest[0].Rev+int64(i))
		}
	}
	quiet(t, s, all[n-1].Cursor)
	if ps := checkProblems(t, s); len(ps) > 0 {
		t.Errorf("Check: %+v", ps)
	}
	storetest.Verify(t, s)
}

// TestStaleListingWithAndWithoutTheLivenessIndex lists the checkpoints
// not seen for a minute: the liveness log skips those that beat, and with
// its index gone (rebuilt from the beat files) the answer is the same.
func TestStaleListingWithAndWithoutTheLivenessIndex(t *testing.T) {
	s := newStore(t, Options{})
	ctx := context.Background()
	old := time.Now().Add(-2 * time.Hour)
	s.SetClock(func() time.Time { return old })
	appendOK(t, s, "s/beating", createEvent())
	appendOK(t, s, "s/silent", createEvent())
	s.SetClock(nil)
	if err := s.Beat(ctx, "s/beating", ckpt.Signal{}); err != nil {
		t.Fatal(err)
	}
	stale := func() []string {
		t.Helper()
		got, err := ckpt.ListAll(ctx, s, ckpt.Filter{SeenBefore: time.Now().Add(-time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		return ids
	}
	if got := stale(); len(got) != 1 || got[0] != "s/silent" {
		t.Errorf("stale with the liveness log: %v, want s/silent", got)
	}
	os.Remove(s.journal().liveIndex())
	if got := stale(); len(got) != 1 || got[0] != "s/silent" {
		t.Errorf("stale with the liveness index rebuilt: %v, want s/silent", got)
	}
	if err := s.Beat(ctx, "s/silent", ckpt.Signal{State: ckpt.PresenceWaiting}); err != nil {
		t.Fatal(err)
	}
	if got := stale(); len(got) != 0 {
		t.Errorf("stale after both beat: %v, want none", got)
	}
}
