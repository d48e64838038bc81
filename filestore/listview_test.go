package filestore

import (
	"context"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// TestJournalTailIsReadLazily: the view reads the journal lines after the
// index by their ID only (an event line as Append writes it), and decodes
// one when a listing reaches it, with the same result as a full decode.
func TestJournalTailIsReadLazily(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "lazy/a", createEvent())
	appendOK(t, s, "lazy/a", noteEvent("one"))
	appendOK(t, s, "lazy/b", createEvent())
	v, err := s.journal().loadView()
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	if len(v.tail) != 2 {
		t.Fatalf("the view's tail holds %d checkpoints, want 2", len(v.tail))
	}
	for id, e := range v.tail {
		if e.raw == nil {
			t.Errorf("the tail entry of %s was decoded when the view was read, want it read lazily", id)
		}
		r := e.resolved()
		if r.unknown || r.decoded == nil || r.decoded.ID != id {
			t.Errorf("the tail entry of %s resolves to %+v", id, r)
		}
	}
	if e, ok := v.latest("lazy/a"); !ok || e.rev != 2 {
		t.Errorf("latest(lazy/a) = rev %d, %v; want 2", e.rev, ok)
	}
	// A damaged line resolves to an entry read from the files.
	bad := ientry{id: "lazy/a", raw: []byte(`{"kind":"event","id":"lazy/a","rev":`)}
	if r := bad.resolved(); !r.unknown || r.size != -1 {
		t.Errorf("a torn line resolves to %+v, want an unknown entry", r)
	}
	if got := listIDs(t, s); got["lazy/a"] != 2 || got["lazy/b"] != 1 {
		t.Errorf("List: %v, want lazy/a at 2 and lazy/b at 1", got)
	}
}

// TestListContinuesItsLastView: a Store's List reads only the journal
// lines after its previous List's view, and still sees every write made
// since (its own, another Store's, a deletion) and a new index after a
// compaction.
func TestListContinuesItsLastView(t *testing.T) {
	ctx := context.Background()
	s := newStore(t, Options{})
	other, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	appendOK(t, s, "cont/a", createEvent())
	appendOK(t, s, "cont/b", createEvent())
	if got := listIDs(t, s); len(got) != 2 {
		t.Fatalf("List: %v", got)
	}
	first := s.listed
	if listIDs(t, s); reflect.ValueOf(s.listed.tail).UnsafePointer() != reflect.ValueOf(first.tail).UnsafePointer() {
		t.Error("a List with nothing new in the journal read the journal's tail again")
	}
	appendOK(t, other, "cont/a", noteEvent("by another store"))
	appendOK(t, other, "cont/c", createEvent())
	appendOK(t, other, "cont/b", ckpt.MustEvent(ckpt.EventArchived, time.Now(), ckpt.Actor{}, ckpt.Archive{Reason: "complete"}))
	if err := other.Delete(ctx, "cont/b"); err != nil {
		t.Fatal(err)
	}
	got := listIDs(t, s)
	if len(got) != 2 || got["cont/a"] != 2 || got["cont/c"] != 1 {
		t.Fatalf("List after another store's writes: %v, want cont/a at 2 and cont/c at 1", got)
	}
	if s.listed.tailN != first.tailN+4 {
		t.Errorf("the view's tail holds %d lines after 4 more, was %d", s.listed.tailN, first.tailN)
	}
	if len(first.tail) != 2 {
		t.Errorf("continuing a view changed the earlier view's tail (%d entries)", len(first.tail))
	}
	// A new index (compaction) starts a new view.
	compactNow(t, s)
	appendOK(t, s, "cont/d", createEvent())
	if got := listIDs(t, s); len(got) != 3 || got["cont/d"] != 1 {
		t.Fatalf("List after a compaction: %v", got)
	}
	if s.listed.tailN != 1 {
		t.Errorf("after a compaction the view's tail holds %d lines, want the 1 written since", s.listed.tailN)
	}
	if _, err := os.Stat(s.journal().index()); err != nil {
		t.Fatal(err)
	}
}

// FuzzLazyEntry: whatever a journal line holds, reading it lazily agrees
// with decoding it: the same ID and revision, or a line read from the
// files (unknown), never another checkpoint's entry.
func FuzzLazyEntry(f *testing.F) {
	f.Add([]byte(`{"kind":"event","id":"a/b","rev":3,"type":"note","at":"2026-01-15T14:30:00Z","sum":"x","size":120,"summary":{"id":"a/b","rev":3,"status":"in_progress"}}`))
	f.Add([]byte(`{"kind":"deleted","id":"a/b","rev":4,"at":"2026-01-15T14:30:00Z"}`))
	f.Add([]byte(`{"kind":"event","id":"a\u002fb","rev":1}`))
	f.Add([]byte(`{"kind":"event","id":"a","id":"b","rev":1}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, ok := lazyEntry(line)
		if !ok {
			return
		}
		var je jentry
		full := json.Unmarshal(line, &je) == nil && je.ID != ""
		r := e.resolved()
		switch {
		case r.unknown:
			if r.size != -1 || r.id != e.id {
				t.Fatalf("unknown entry %+v", r)
			}
		case !full || je.ID != e.id || je.Rev != r.rev || je.Size != r.size:
			t.Fatalf("lazy entry %+v resolves to %+v, a full decode gives %+v (%v)", e, r, je, full)
		}
	})
}

// TestCompactionKeepsWhatItCannotRead: a journal entry whose checkpoint
// cannot be read when the journal is folded (here: damaged, no state
// file) stops the compaction, which keeps the tail, instead of leaving the
// checkpoint out of the index; a checkpoint that is gone does leave it.
func TestCompactionKeepsWhatItCannotRead(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "keep/a", createEvent())
	appendOK(t, s, "keep/b", createEvent())
	// Entries without a summary make the compaction read the files.
	for _, id := range []string{"keep/a", "keep/b"} {
		line, err := appendEntry(nil, &jentry{Kind: ckpt.ChangeEvent, ID: id, Rev: 1, At: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.journalLine(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	f := s.files("keep/a")
	if err := os.WriteFile(f.history(), []byte("{\"seq\":1,\"garbage\":true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(f.state())
	if err := os.RemoveAll(s.files("keep/b").dir); err != nil {
		t.Fatal(err)
	}
	v, err := s.journal().loadView()
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	if err := s.compact(v); err == nil {
		t.Fatal("the compaction folded a journal whose keep/a it cannot read, want an error")
	}
	if sn, _ := s.journal().readSnapshot(); sn != nil && sn.count > 0 {
		t.Errorf("a failed compaction wrote an index of %d lines", sn.count)
		sn.close()
	}
	os.Remove(f.history()) // now keep/a is gone too
	if err := s.compact(v); err != nil {
		t.Fatalf("compacting once both are gone: %v", err)
	}
}

// compactNow folds s's journal into a new index, as a compaction does.
func compactNow(t testing.TB, s *Store) {
	t.Helper()
	v, err := s.journal().loadView()
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	if err := s.compact(v); err != nil {
		t.Fatal(err)
	}
}
