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

func testCreateAndGet(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "kai-7/secondary-a"
	res, err := s.Append(ctx, id, event(1, ckpt.EventCreated, ckpt.Created{
		Patch: ckpt.Patch{Title: ptr("Schedule fetcher spec"), Agent: &ckpt.Agent{ID: "kai-7", Name: "Secondary-A"}},
		Steps: []ckpt.Step{{ID: "research"}, {ID: "spec"}},
	}), ckpt.AppendOptions{})
	if err != nil {
		t.Fatalf("Append created: %v", err)
	}
	if res.Replayed || len(res.Warnings) > 0 {
		t.Errorf("a first append reports Replayed=%v Warnings=%v", res.Replayed, res.Warnings)
	}
	if res.Event.Seq != 1 || res.Event.Prev != "" || len(res.Event.Sum) != 32 {
		t.Errorf("first event has seq %d prev %q sum %q; want seq 1, no prev, a 32-hex sum", res.Event.Seq, res.Event.Prev, res.Event.Sum)
	}
	st := res.State
	if st.ID != id || st.Rev != 1 || st.Title != "Schedule fetcher spec" || st.Status != ckpt.StatusInProgress ||
		len(st.Steps) != 2 || st.Progress.Total != 2 || !st.StartedAt.Equal(at(1)) {
		t.Errorf("state after create is wrong: %+v", st)
	}
	got := mustGet(t, s, id)
	if d := diffState(st, got); d != "" {
		t.Errorf("Get differs from the Append result (-append +get):\n%s", d)
	}
	if _, err := s.Get(ctx, "kai-7/other", 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("Get of a missing checkpoint: %v, want ErrNotFound", err)
	}
}

func testCreateExisting(t *testing.T, s ckpt.Store) {
	create(t, s, "dup", ckpt.Created{Patch: ckpt.Patch{Title: ptr("first")}})
	_, err := s.Append(context.Background(), "dup", created("second"), ckpt.AppendOptions{})
	wantErr(t, "creating an existing checkpoint", err, ckpt.ErrExists)
	unchanged(t, s, "dup", 1)
	if c := mustGet(t, s, "dup"); c.Title != "first" {
		t.Errorf("title is %q after a refused create, want first", c.Title)
	}
}

// testEveryEventType appends one event of every type and checks what each
// did; the cleanup's Verify then checks that the history folds to the state.
func testEveryEventType(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "all-events"
	var atRev5 *ckpt.Checkpoint
	steps := []struct {
		t     ckpt.EventType
		data  any
		check func(c *ckpt.Checkpoint) error
	}{
		{ckpt.EventCreated, ckpt.Created{
			Patch: ckpt.Patch{Title: ptr("all"), Agent: &ckpt.Agent{ID: "a1", Name: "Alpha"}, AddLabels: []string{"x"},
				MaxCycles: ptr(2), Interval: ptr(ckpt.Duration(5 * time.Minute))},
			Steps:      []ckpt.Step{{ID: "research"}, {ID: "spec"}},
			Acceptance: []ckpt.Criterion{{ID: "ac1", Title: "works"}},
		}, func(c *ckpt.Checkpoint) error {
			return expect(c.Agent.ID == "a1" && c.Cycles.Max == 2 && c.Heartbeat.Interval.D() == 5*time.Minute && len(c.Acceptance) == 1, "created fields")
		}},
		{ckpt.EventUpdate, ckpt.Patch{Stage: ptr("S2"), FilesModified: []string{"spec.md"}, NextSteps: &[]string{"write"}},
			func(c *ckpt.Checkpoint) error {
				return expect(c.Stage == "S2" && len(c.Files.Modified) == 1 && len(c.Resume.NextSteps) == 1, "update fields")
			}},
		{ckpt.EventStep, ckpt.StepChange{ID: "research", Status: ckpt.StepInProgress}, func(c *ckpt.Checkpoint) error {
			return expect(c.Steps[0].Status == ckpt.StepInProgress && c.CurrentStep == "research", "step started")
		}},
		{ckpt.EventStep, ckpt.StepChange{ID: "research", Status: ckpt.StepDone, Output: "NOTES.md"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Steps[0].Status == ckpt.StepDone && c.Progress.Done == 1 && c.Steps[0].Output == "NOTES.md", "step done")
		}},
		{ckpt.EventDecision, ckpt.DecisionData{Text: "use v2", Reason: "v1 is rate limited"}, func(c *ckpt.Checkpoint) error {
			return expect(len(c.Decisions) == 1 && c.Decisions[0].Reason == "v1 is rate limited", "decision")
		}},
		{ckpt.EventBlocker, ckpt.BlockerChange{Text: "waiting for DISCOVERY.md"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Status == ckpt.StatusBlocked && len(c.ActiveBlockers()) == 1, "blocker added")
		}},
		{ckpt.EventBlocker, ckpt.BlockerChange{Clear: true}, func(c *ckpt.Checkpoint) error {
			return expect(c.Status == ckpt.StatusInProgress && len(c.ActiveBlockers()) == 0, "blocker cleared")
		}},
		{ckpt.EventError, ckpt.ErrorChange{Type: "build", Message: "compile failed", Blocking: true}, func(c *ckpt.Checkpoint) error {
			return expect(c.Status == ckpt.StatusBlocked && len(c.ActiveErrors()) == 1, "blocking error")
		}},
		{ckpt.EventError, ckpt.ErrorChange{Clear: true}, func(c *ckpt.Checkpoint) error {
			return expect(c.Status == ckpt.StatusInProgress && len(c.ActiveErrors()) == 0, "error cleared")
		}},
		{ckpt.EventAccept, ckpt.AcceptChange{ID: "ac1", Met: true}, func(c *ckpt.Checkpoint) error {
			return expect(c.Acceptance[0].Met && c.Acceptance[0].VerifiedAt != nil, "acceptance met")
		}},
		{ckpt.EventCycle, ckpt.CycleChange{Note: "fix 1"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Cycles.Count == 1, "cycle counted")
		}},
		{ckpt.EventNote, ckpt.Note{Text: "halfway"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Context.Notes == "halfway", "note")
		}},
		{ckpt.EventStatus, ckpt.StatusChange{Status: ckpt.StatusWaiting, Reason: "review"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Status == ckpt.StatusWaiting && c.StatusReason == "review", "status")
		}},
		{ckpt.EventResumed, ckpt.SessionChange{Session: ckpt.Session{ID: "s2"}}, func(c *ckpt.Checkpoint) error {
			return expect(c.Session.ID == "s2" && c.Session.Number == 2 && c.Status == ckpt.StatusInProgress, "resumed")
		}},
		{ckpt.EventTakenOver, ckpt.Takeover{From: ckpt.Agent{ID: "a1"}, To: ckpt.Agent{ID: "a2"}, Session: ckpt.Session{ID: "s3"}}, func(c *ckpt.Checkpoint) error {
			return expect(c.Agent.ID == "a2" && c.Session.Number == 3, "taken over")
		}},
		{ckpt.EventRestored, nil, func(c *ckpt.Checkpoint) error {
			return expect(len(c.Decisions) == 1 && c.Steps[0].Status == ckpt.StepDone && c.Cycles.Count == 0 && c.Rev == 16, "restored to revision 5")
		}},
		{ckpt.EventSynced, nil, func(c *ckpt.Checkpoint) error {
			return expect(c.Title == "synced title", "synced")
		}},
		{ckpt.EventImported, nil, func(c *ckpt.Checkpoint) error {
			return expect(c.Title == "imported title", "imported")
		}},
		{ckpt.EventRestarted, ckpt.Restart{Reason: "start over"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Steps[0].Status == ckpt.StepPending && len(c.Decisions) == 0 && c.Progress.Done == 0, "restarted")
		}},
		{ckpt.EventArchived, ckpt.Archive{Reason: "complete"}, func(c *ckpt.Checkpoint) error {
			return expect(c.Archived != nil && c.Archived.Reason == "complete", "archived")
		}},
	}
	for i, step := range steps {
		rev := int64(i + 1)
		data := step.data
		switch step.t {
		case ckpt.EventRestored:
			old, err := s.Get(ctx, id, 5)
			if err != nil {
				t.Fatalf("Get revision 5: %v", err)
			}
			atRev5 = old
			data = ckpt.Snapshot{State: *atRev5, Rev: 5}
		case ckpt.EventSynced, ckpt.EventImported:
			st := *mustGet(t, s, id)
			st.Title = map[ckpt.EventType]string{ckpt.EventSynced: "synced title", ckpt.EventImported: "imported title"}[step.t]
			data = ckpt.Snapshot{State: st, Source: "storetest"}
		}
		res := mustAppend(t, s, id, event(i, step.t, data))
		if res.Event.Seq != rev || res.Event.Type != step.t || res.State.Rev != rev {
			t.Fatalf("%s: event seq %d type %s state rev %d, want %d %s %d", step.t, res.Event.Seq, res.Event.Type, res.State.Rev, rev, step.t, rev)
		}
		if err := step.check(res.State); err != nil {
			t.Errorf("after %s event (revision %d): %v", step.t, rev, err)
		}
		if d := diffState(res.State, mustGet(t, s, id)); d != "" {
			t.Errorf("after %s: Get differs from the Append result (-append +get):\n%s", step.t, d)
		}
	}
}

func expect(ok bool, what string) error {
	if !ok {
		return fmt.Errorf("%s not as expected", what)
	}
	return nil
}

// testImportedCreates checks that an imported snapshot can be a checkpoint's
// first event (an import from a seed file), and only the first.
func testImportedCreates(t *testing.T, s ckpt.Store) {
	snap := ckpt.Snapshot{State: ckpt.Checkpoint{Title: "from a seed file", Status: ckpt.StatusWaiting}, Source: "storetest"}
	res := mustAppend(t, s, "imported/first", event(0, ckpt.EventImported, snap))
	if res.Event.Seq != 1 || res.State.Rev != 1 || res.State.Title != "from a seed file" || res.State.Status != ckpt.StatusWaiting {
		t.Errorf("imported first event: seq %d, state %+v", res.Event.Seq, res.State)
	}
	if d := diffState(res.State, mustGet(t, s, "imported/first")); d != "" {
		t.Errorf("Get differs from the Append result:\n%s", d)
	}
	_, err := s.Append(context.Background(), "imported/none", event(0, ckpt.EventNote, ckpt.Note{Text: "x"}), ckpt.AppendOptions{})
	wantErr(t, "a note as a first event", err, ckpt.ErrNotFound)
}

func testEventFieldsSetByStore(t *testing.T, s ckpt.Store) {
	first := mustAppend(t, s, "fields", created("f"))
	e := note(1, "given time")
	e.Seq, e.Prev, e.Sum = 99, "bogus", "bogus" // the store owns these
	res := mustAppend(t, s, "fields", e)
	if res.Event.Seq != 2 || res.Event.Prev != first.Event.Sum || res.Event.Sum == "bogus" || !res.Event.At.Equal(at(1)) {
		t.Errorf("stored event seq %d prev %q sum %q at %v; want seq 2, prev = first sum %q, a fresh sum, at %v",
			res.Event.Seq, res.Event.Prev, res.Event.Sum, res.Event.At, first.Event.Sum, at(1))
	}
	if res.Event.Actor != actor || res.Event.Type != ckpt.EventNote {
		t.Errorf("stored event lost its actor or type: %+v", res.Event)
	}
	// A minute of slack either side: the wall clock may be stepped, and a
	// loaded machine may take long, but a zero time is never "about now".
	before := time.Now().Add(-time.Minute)
	zero := ckpt.MustEvent(ckpt.EventNote, time.Time{}, actor, ckpt.Note{Text: "no time"})
	res = mustAppend(t, s, "fields", zero)
	if res.Event.At.Before(before) || res.Event.At.After(time.Now().Add(time.Minute)) {
		t.Errorf("an event without a time was stored at %v, want about now", res.Event.At)
	}
	// Data as given (spaces, characters JSON may escape) comes back from
	// Append exactly as History will give it.
	spaced := ckpt.Event{Type: ckpt.EventNote, At: at(4), Key: "k<&>", Data: []byte(`{ "text" : "a <b> & c\u00e9" }`)}
	res2 := mustAppend(t, s, "fields", spaced)
	h := mustHistory(t, s, "fields")
	if d := cmp.Diff(res.Event, h[2], eventOpts); d != "" {
		t.Errorf("History differs from the Append result (-append +history):\n%s", d)
	}
	if d := cmp.Diff(res2.Event, h[3], eventOpts); d != "" {
		t.Errorf("History differs from the Append result for spaced data (-append +history):\n%s", d)
	}
	if res2.State.Context.Notes != "given time\nno time\na <b> & c\u00e9" {
		t.Errorf("notes = %q", res2.State.Context.Notes)
	}
}

func testRefusedEventChangesNothing(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "refused"
	create(t, s, id, ckpt.Created{Patch: ckpt.Patch{Title: ptr("r"), MaxCycles: ptr(1)}})
	mustAppend(t, s, id, event(1, ckpt.EventCycle, nil))
	before := mustGet(t, s, id)
	refused := []struct {
		e      ckpt.Event
		target error
	}{
		{event(2, ckpt.EventDecision, ckpt.DecisionData{}), ckpt.ErrInvalid},
		{event(2, ckpt.EventBlocker, ckpt.BlockerChange{Clear: true}), ckpt.ErrInvalid},
		{event(2, ckpt.EventStatus, ckpt.StatusChange{Status: "sideways"}), ckpt.ErrInvalid},
		{event(2, ckpt.EventCycle, nil), ckpt.ErrCycleLimit},
		{event(2, "no-such-type", nil), ckpt.ErrInvalid},
		{ckpt.Event{Type: ckpt.EventNote, At: at(2), Data: []byte(`{"text":`)}, ckpt.ErrInvalid},
		// Apply refuses this snapshot only after it has replaced the state
		// it was given: the store must have given it a copy.
		{event(2, ckpt.EventRestored, ckpt.Snapshot{State: ckpt.Checkpoint{Title: "bad", Status: "sideways"}}), ckpt.ErrInvalid},
	}
	for _, r := range refused {
		// A refused event must not record its key either.
		_, err := s.Append(ctx, id, keyed(r.e, "k-refused"), ckpt.AppendOptions{})
		wantErr(t, fmt.Sprintf("refused %s event", r.e.Type), err, r.target)
		unchanged(t, s, id, 2)
	}
	if d := diffState(before, mustGet(t, s, id)); d != "" {
		t.Errorf("refused events changed the state:\n%s", d)
	}
	res := mustAppend(t, s, id, keyed(note(3, "after"), "k-refused"))
	if res.Replayed || res.Event.Seq != 3 {
		t.Errorf("first valid event after refused ones: Replayed=%v seq %d, want a new event at seq 3", res.Replayed, res.Event.Seq)
	}
}

func testIfRev(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "cas"
	create(t, s, id, ckpt.Created{Patch: ckpt.Patch{Title: ptr("c")}})
	res, err := s.Append(ctx, id, note(1, "at 1"), ckpt.AppendOptions{IfRev: 1})
	if err != nil || res.State.Rev != 2 {
		t.Fatalf("Append with the right IfRev: rev %v, %v; want revision 2", res.State, err)
	}
	_, err = s.Append(ctx, id, note(2, "stale"), ckpt.AppendOptions{IfRev: 1})
	var ce *ckpt.ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ckpt.ErrConflict) {
		t.Fatalf("Append with a stale IfRev: %v, want a *ckpt.ConflictError", err)
	}
	if ce.ID != id || ce.Want != 1 || ce.Have != 2 {
		t.Errorf("conflict says ID %q want %d have %d; want %q 1 2", ce.ID, ce.Want, ce.Have, id)
	}
	unchanged(t, s, id, 2)
	_, err = s.Append(ctx, id, note(2, "ahead"), ckpt.AppendOptions{IfRev: 7})
	if !errors.As(err, &ce) || ce.Want != 7 || ce.Have != 2 {
		t.Errorf("Append with an IfRev ahead of the checkpoint: %v, want a conflict 7/2", err)
	}
	unchanged(t, s, id, 2)
	_, err = s.Append(ctx, "cas-missing", note(1, "x"), ckpt.AppendOptions{IfRev: 1})
	wantErr(t, "IfRev on a missing checkpoint", err, ckpt.ErrNotFound)
	if _, err := s.Get(ctx, "cas-missing", 0); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("a refused IfRev append created the checkpoint: %v", err)
	}
	if res, err := s.Append(ctx, id, note(3, "at 2"), ckpt.AppendOptions{IfRev: 2}); err != nil || res.Event.Seq != 3 {
		t.Errorf("Append with the right IfRev after conflicts: %v; want seq 3", err)
	}
}

func testIdempotencyKey(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "idem"
	first := mustAppend(t, s, id, keyed(created("i"), "start-1"))
	one := mustAppend(t, s, id, keyed(note(1, "once"), "note-1"))
	again, err := s.Append(ctx, id, keyed(note(1, "once"), "note-1"), ckpt.AppendOptions{})
	if err != nil {
		t.Fatalf("repeating a key: %v", err)
	}
	if !again.Replayed {
		t.Error("repeating a key did not report Replayed")
	}
	if d := cmp.Diff(one.Event, again.Event, eventOpts); d != "" {
		t.Errorf("replayed event differs from the first (-first +replay):\n%s", d)
	}
	if d := diffState(one.State, again.State); d != "" {
		t.Errorf("replayed state differs from the first result (-first +replay):\n%s", d)
	}
	unchanged(t, s, id, 2)

	// Other events in between; a retry still returns the first result, as it
	// was then, whatever the retried event says and even with a stale IfRev.
	mustAppend(t, s, id, note(2, "other"))
	mustAppend(t, s, id, keyed(note(3, "other keyed"), "note-3"))
	again, err = s.Append(ctx, id, keyed(note(4, "different text"), "note-1"), ckpt.AppendOptions{IfRev: 2})
	if err != nil || !again.Replayed || again.Event.Seq != 2 || again.State.Rev != 2 || again.State.Context.Notes != "once" {
		t.Errorf("retry after other events: %+v, %v; want a replay of seq 2 with its state at revision 2", again, err)
	}
	retried, err := s.Append(ctx, id, keyed(created("i"), "start-1"), ckpt.AppendOptions{})
	if err != nil || !retried.Replayed || retried.Event.Seq != 1 || retried.State.Rev != 1 {
		t.Errorf("retried create with its key: %v, %v; want a replay of seq 1 (not ErrExists)", retried.Event.Seq, err)
	}
	if d := diffState(first.State, retried.State); d != "" {
		t.Errorf("replayed create differs from the first result:\n%s", d)
	}
	unchanged(t, s, id, 4)

	// Keys belong to one checkpoint.
	mustAppend(t, s, "idem-other", created("o"))
	res := mustAppend(t, s, "idem-other", keyed(note(1, "same key elsewhere"), "note-1"))
	if res.Replayed || res.Event.Seq != 2 {
		t.Errorf("a key used on another checkpoint was replayed here: %+v", res.Event)
	}
}

// testIdempotencyKeyWindow checks that a key is still found when it is the
// oldest of the last ckpt.KeyWindow events.
func testIdempotencyKeyWindow(t *testing.T, s ckpt.Store) {
	id := "window"
	mustAppend(t, s, id, created("w"))
	first := mustAppend(t, s, id, keyed(note(1, "keyed"), "old-key"))
	for i := 0; i < ckpt.KeyWindow-1; i++ {
		mustAppend(t, s, id, event(2+i, ckpt.EventCycle, nil))
	}
	rev := first.Event.Seq + int64(ckpt.KeyWindow) - 1
	res := mustAppend(t, s, id, keyed(note(5000, "retry"), "old-key"))
	if !res.Replayed || res.Event.Seq != first.Event.Seq {
		t.Errorf("a key %d events back was not replayed: %+v", ckpt.KeyWindow, res.Event)
	}
	unchanged(t, s, id, rev)
}

// testMadeKey checks keys made for one call: an append sent with
// ckpt.KeyNew applies once, and its resend (ckpt.KeyResent, after a lost
// answer) replays it, after other events too and for a create, though the
// store may have kept a made key out of its key index; the resend of a
// made key whose first send never arrived appends it, once.
func testMadeKey(t *testing.T, s ckpt.Store) {
	ctx := context.Background()
	id := "made-key"
	made, resent := ckpt.AppendOptions{KeyOrigin: ckpt.KeyNew}, ckpt.AppendOptions{KeyOrigin: ckpt.KeyResent}
	createKey, noteKey := ckpt.NewKey("test-"), ckpt.NewKey("test-")
	first, err := s.Append(ctx, id, keyed(created("m"), createKey), made)
	if err != nil || first.Replayed {
		t.Fatalf("a create with a made key: %+v, %v", first, err)
	}
	one, err := s.Append(ctx, id, keyed(note(1, "once"), noteKey), made)
	if err != nil || one.Replayed || one.Event.Seq != 2 {
		t.Fatalf("a note with a made key: %+v, %v; want seq 2", one, err)
	}
	mustAppend(t, s, id, note(2, "other"))
	mustAppend(t, s, id, keyed(note(3, "given"), "given-3"))
	for range 2 {
		again, err := s.Append(ctx, id, keyed(note(1, "once"), noteKey), resent)
		if err != nil || !again.Replayed || again.Event.Seq != 2 || again.State.Rev != 2 {
			t.Fatalf("resending a made key that was applied: %+v, %v; want a replay of seq 2", again, err)
		}
		if d := cmp.Diff(one.Event, again.Event, eventOpts); d != "" {
			t.Errorf("replayed event differs from the first (-first +replay):\n%s", d)
		}
	}
	retried, err := s.Append(ctx, id, keyed(created("m"), createKey), resent)
	if err != nil || !retried.Replayed || retried.Event.Seq != 1 {
		t.Errorf("resending a made key's create: %+v, %v; want a replay of seq 1 (not ErrExists)", retried.Event, err)
	}
	unchanged(t, s, id, 4)

	lostKey := ckpt.NewKey("test-")
	res, err := s.Append(ctx, id, keyed(note(5, "first send lost"), lostKey), resent)
	if err != nil || res.Replayed || res.Event.Seq != 5 {
		t.Fatalf("resending a made key never applied: %+v, %v; want it appended at seq 5", res, err)
	}
	res, err = s.Append(ctx, id, keyed(note(5, "first send lost"), lostKey), resent)
	if err != nil || !res.Replayed || res.Event.Seq != 5 {
		t.Errorf("resending it again: %+v, %v; want a replay of seq 5", res, err)
	}
	unchanged(t, s, id, 5)
}

// testConcurrentSameCheckpoint checks that concurrent writers of one
// checkpoint are serialised: every append gets its own revision and the
// final revision is exact.
func testConcurrentSameCheckpoint(t *testing.T, s ckpt.Store) {
	const writers, each = 8, 25
	id := "contended"
	mustAppend(t, s, id, created("c"))
	seqs := make(chan int64, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				res, err := s.Append(context.Background(), id, note(w*each+i, fmt.Sprintf("w%d-%d", w, i)), ckpt.AppendOptions{})
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				seqs <- res.Event.Seq
			}
		})
	}
	wg.Wait()
	close(seqs)
	seen := map[int64]bool{}
	for q := range seqs {
		if seen[q] {
			t.Errorf("two appends got seq %d", q)
		}
		seen[q] = true
	}
	unchanged(t, s, id, 1+writers*each)
}

// testConcurrentSameKey checks that the key check and the append are one
// step: of many concurrent appends with one key, exactly one appends.
func testConcurrentSameKey(t *testing.T, s ckpt.Store) {
	const writers = 8
	id := "same-key"
	mustAppend(t, s, id, created("k"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	appended, replayed := 0, 0
	for w := range writers {
		wg.Go(func() {
			res, err := s.Append(context.Background(), id, keyed(note(w, "hook retry"), "hook-1"), ckpt.AppendOptions{})
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if res.Replayed {
				replayed++
			} else {
				appended++
			}
		})
	}
	wg.Wait()
	if appended != 1 || replayed != writers-1 {
		t.Errorf("%d appended and %d replayed, want 1 and %d", appended, replayed, writers-1)
	}
	unchanged(t, s, id, 2)
}

func testConcurrentDifferentCheckpoints(t *testing.T, s ckpt.Store) {
	const writers, each = 8, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			id := fmt.Sprintf("agent-%d/task", w)
			if _, err := s.Append(context.Background(), id, created(id), ckpt.AppendOptions{}); err != nil {
				t.Errorf("create %s: %v", id, err)
				return
			}
			for i := range each {
				if _, err := s.Append(context.Background(), id, note(i, "n"), ckpt.AppendOptions{}); err != nil {
					t.Errorf("append %s: %v", id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		unchanged(t, s, fmt.Sprintf("agent-%d/task", w), 1+each)
	}
}
