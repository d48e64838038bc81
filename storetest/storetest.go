// Package storetest is the conformance suite every ckpt.Store backend runs.
// It tests only the Store contract (nothing about files, tables or HTTP), so
// that filestore, memstore, a PostgreSQL backend and the HTTP client are
// interchangeable:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) ckpt.Store { return openEmptyStore(t) })
//	}
//
// Every store the suite opens is verified when its test ends (see Verify)
// and then closed.
//
// Beyond the interface's doc comments, the suite pins these semantics:
//   - Append checks a repeated idempotency key first: a repeat replays the
//     first result whatever the event and opts (a retried "created" or a
//     retry with a now stale IfRev still replays), so hooks can retry blindly.
//     A refused event records no key.
//   - Then IfRev: on a missing checkpoint IfRev > 0 fails with ErrNotFound;
//     on an existing one a mismatch fails with *ConflictError.
//   - Then Apply: a refused event stores nothing and leaves the revision.
//   - History(id, from) with from past the last event returns no events and
//     no error; Get(id, rev) past the last revision fails with ErrNotFound.
//   - Values returned are the caller's: changing them changes nothing stored.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Run runs the conformance suite. open must return a new, empty store each
// time it is called; Run closes every store it opens after verifying it.
// Subtests run sequentially; some start many goroutines on one store.
func Run(t *testing.T, open func(t *testing.T) ckpt.Store) {
	newStore := func(t *testing.T) ckpt.Store {
		t.Helper()
		s := open(t)
		t.Cleanup(func() {
			Verify(t, s)
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

// cases lists the suite's tests in the order they run.
var cases = []struct {
	name string
	run  func(t *testing.T, s ckpt.Store)
}{
	{"CreateAndGet", testCreateAndGet},
	{"CreateExisting", testCreateExisting},
	{"EveryEventType", testEveryEventType},
	{"ImportedCreates", testImportedCreates},
	{"EventFieldsSetByStore", testEventFieldsSetByStore},
	{"GetRevision", testGetRevision},
	{"HistoryFrom", testHistoryFrom},
	{"RefusedEventChangesNothing", testRefusedEventChangesNothing},
	{"IfRev", testIfRev},
	{"AsCheckpointAgent", testAsCheckpointAgent},
	{"IdempotencyKey", testIdempotencyKey},
	{"IdempotencyKeyWindow", testIdempotencyKeyWindow},
	{"MadeKey", testMadeKey},
	{"ConcurrentSameCheckpoint", testConcurrentSameCheckpoint},
	{"ConcurrentSameKey", testConcurrentSameKey},
	{"ConcurrentDifferentCheckpoints", testConcurrentDifferentCheckpoints},
	{"List", testList},
	{"ListEmpty", testListEmpty},
	{"NestedIDs", testNestedIDs},
	{"InvalidIDs", testInvalidIDs},
	{"NotFound", testNotFound},
	{"Beat", testBeat},
	{"ConcurrentBeats", testConcurrentBeats},
	{"Delete", testDelete},
	{"ResultsAreCopies", testResultsAreCopies},
	{"ListPaging", testListPaging},
	{"ListTimeFilters", testListTimeFilters},
	{"ListQuiet", testListQuiet},
	{"HistoryLimit", testHistoryLimit},
	{"ClockSkew", testClockSkew},
	{"UpdateConcurrent", testUpdateConcurrent},
	{"Presence", testPresence},
	{"LifecycleRules", testLifecycleRules},
	{"Takeover", testTakeover},
	{"HandOverConcurrent", testHandOverConcurrent},
	{"LongIDHandOver", testLongIDHandOver},
	{"Abandon", testAbandon},
	{"Watch", testWatch},
	{"WatchConcurrent", testWatchConcurrent},
}

// Verify checks every checkpoint in s, archived ones included: its history
// chain-verifies (dense seqs from 1, each line's checksum recomputed with
// ckpt.EncodeLine, each Prev the Sum before it), its fold equals Get of the
// latest revision and List's entry (ignoring Heartbeat.LastBeat), and Rev is
// the number of events. Backends' own tests call it on stores they damaged
// and repaired.
func Verify(t testing.TB, s ckpt.Store) {
	t.Helper()
	ctx := context.Background()
	all, err := ckpt.ListAll(ctx, s, ckpt.Filter{IncludeArchived: true})
	if err != nil {
		t.Errorf("verify: List: %v", err)
		return
	}
	for i := range all {
		listed := &all[i]
		if err := verifyOne(ctx, s, listed); err != nil {
			t.Errorf("verify %s: %v", listed.ID, err)
		}
	}
}

func verifyOne(ctx context.Context, s ckpt.Store, listed *ckpt.Summary) error {
	id := listed.ID
	if err := ckpt.ValidateID(id); err != nil {
		return fmt.Errorf("List returned an invalid ID: %v", err)
	}
	events, err := s.History(ctx, id, 0, 0)
	if err != nil {
		return fmt.Errorf("History: %v", err)
	}
	if err := verifyChain(events); err != nil {
		return err
	}
	folded, err := ckpt.Fold(id, events)
	if err != nil {
		return fmt.Errorf("Fold(History): %v", err)
	}
	got, err := s.Get(ctx, id, 0)
	if err != nil {
		return fmt.Errorf("Get: %v", err)
	}
	if d := diffState(folded, got); d != "" {
		return fmt.Errorf("Get differs from Fold(History) (-fold +get):\n%s", d)
	}
	if d := diffSummary(got, listed); d != "" {
		return fmt.Errorf("List differs from Get (-get +list):\n%s", d)
	}
	if got.Rev != int64(len(events)) {
		return fmt.Errorf("Rev is %d, the history has %d events", got.Rev, len(events))
	}
	return nil
}

// verifyChain checks that events form a valid history: each one re-encodes
// to the checksum it carries, and the chain runs densely from seq 1.
func verifyChain(events []ckpt.Event) error {
	var chain ckpt.Chain
	for _, e := range events {
		_, sum, err := ckpt.EncodeLine(e)
		if err != nil {
			return fmt.Errorf("event %d does not encode: %v", e.Seq, err)
		}
		if sum != e.Sum {
			return fmt.Errorf("event %d carries sum %q, its line sums to %q", e.Seq, e.Sum, sum)
		}
		if err := chain.Next(e); err != nil {
			return err
		}
	}
	return nil
}

// stateOpts compares checkpoints as stored: LastBeat comes from the liveness
// record, not the history, and empty and nil lists are the same.
var stateOpts = cmp.Options{
	cmpopts.IgnoreFields(ckpt.Heartbeat{}, "LastBeat", "Presence"),
	cmpopts.EquateEmpty(),
}

func diffState(want, got *ckpt.Checkpoint) string { return cmp.Diff(want, got, stateOpts) }

// diffSummary compares the summary of a full state with a listed one,
// ignoring the last beat as diffState does.
func diffSummary(want *ckpt.Checkpoint, got *ckpt.Summary) string {
	w := want.Summary()
	return cmp.Diff(&w, got, cmpopts.EquateEmpty(), cmpopts.IgnoreFields(ckpt.Heartbeat{}, "LastBeat", "Presence"))
}

var eventOpts = cmp.Options{cmpopts.EquateEmpty()}

// t0 is the time of the suite's events; fixed so that states compare exactly.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// at returns the time of the suite's i-th event.
func at(i int) time.Time { return t0.Add(time.Duration(i) * time.Second) }

var actor = ckpt.Actor{Agent: "storetest", Session: "s1"}

func event(i int, t ckpt.EventType, data any) ckpt.Event {
	return ckpt.MustEvent(t, at(i), actor, data)
}

func keyed(e ckpt.Event, key string) ckpt.Event {
	e.Key = key
	return e
}

func ptr[T any](v T) *T { return &v }

func created(title string) ckpt.Event {
	return event(0, ckpt.EventCreated, ckpt.Created{Patch: ckpt.Patch{Title: ptr(title)}})
}

func note(i int, text string) ckpt.Event {
	return event(i, ckpt.EventNote, ckpt.Note{Text: text})
}

// mustAppend appends e and fails the test on error.
func mustAppend(t testing.TB, s ckpt.Store, id string, e ckpt.Event) ckpt.AppendResult {
	t.Helper()
	res, err := s.Append(context.Background(), id, e, ckpt.AppendOptions{})
	if err != nil {
		t.Fatalf("Append(%s, %s): %v", id, e.Type, err)
	}
	return res
}

// create makes checkpoint id with one created event carrying data.
func create(t testing.TB, s ckpt.Store, id string, data ckpt.Created) *ckpt.Checkpoint {
	t.Helper()
	return mustAppend(t, s, id, event(0, ckpt.EventCreated, data)).State
}

func mustGet(t testing.TB, s ckpt.Store, id string) *ckpt.Checkpoint {
	t.Helper()
	c, err := s.Get(context.Background(), id, 0)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return c
}

func mustHistory(t testing.TB, s ckpt.Store, id string) []ckpt.Event {
	t.Helper()
	h, err := s.History(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatalf("History(%s): %v", id, err)
	}
	return h
}

// wantErr fails unless err wraps target.
func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one wrapping %q", what, err, target)
	}
}

// unchanged fails unless checkpoint id still has revision rev and a history
// of rev events.
func unchanged(t testing.TB, s ckpt.Store, id string, rev int64) {
	t.Helper()
	if c := mustGet(t, s, id); c.Rev != rev {
		t.Errorf("%s is at revision %d, want %d unchanged", id, c.Rev, rev)
	}
	if h := mustHistory(t, s, id); int64(len(h)) != rev {
		t.Errorf("%s has %d events, want %d unchanged", id, len(h), rev)
	}
}
