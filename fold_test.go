package ckpt_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// history numbers events the way a store does.
func history(events ...ckpt.Event) []ckpt.Event {
	for i := range events {
		events[i].Seq = int64(i + 1)
	}
	return events
}

func ev(t ckpt.EventType, minute int, data any) ckpt.Event {
	return ckpt.MustEvent(t, t0.Add(time.Duration(minute)*time.Minute), ckpt.Actor{Agent: "Secondary-A"}, data)
}

func TestFoldIsPureAndDeterministic(t *testing.T) {
	events := history(
		ev(ckpt.EventCreated, 0, ckpt.Created{Patch: ckpt.Patch{Title: ptr("Spec"), Agent: &ckpt.Agent{ID: "Secondary-A", Type: "secondary"}}, Steps: []ckpt.Step{{ID: "research"}, {ID: "spec"}, {ID: "checklist"}}}),
		ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "research", Status: ckpt.StepDone, Output: "research/NOTES.md"}),
		ev(ckpt.EventUpdate, 2, ckpt.Patch{Stage: ptr("S2.P2"), CurrentStep: ptr("Writing acceptance criteria"), FilesModified: []string{"feature_02/spec.md"}, NextSteps: &[]string{"Write checklist.md"}}),
		ev(ckpt.EventDecision, 3, ckpt.DecisionData{Text: "Use the v2 API", Reason: "v1 is rate limited"}),
	)
	input, _ := json.Marshal(events)
	a, err := ckpt.Fold("kai-7/secondary-a", events)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ckpt.Fold("kai-7/secondary-a", events)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two folds differ:\n%s", diff)
	}
	after, _ := json.Marshal(events)
	if string(input) != string(after) {
		t.Fatal("Fold changed its input")
	}
	want := &ckpt.Checkpoint{
		ID: "kai-7/secondary-a", Rev: 4, Title: "Spec", Stage: "S2.P2", CurrentStep: "Writing acceptance criteria",
		Agent:   ckpt.Agent{ID: "Secondary-A", Type: "secondary"},
		Session: ckpt.Session{Number: 1, StartedAt: t0},
		Status:  ckpt.StatusInProgress,
		Steps: []ckpt.Step{
			{ID: "research", Status: ckpt.StepDone, CompletedAt: ptr(t0.Add(time.Minute)), Output: "research/NOTES.md"},
			{ID: "spec", Status: ckpt.StepPending}, {ID: "checklist", Status: ckpt.StepPending},
		},
		Progress:  ckpt.Progress{Done: 1, Total: 3, Percent: 33.3},
		Decisions: []ckpt.Decision{{At: t0.Add(3 * time.Minute), Text: "Use the v2 API", Reason: "v1 is rate limited"}},
		Files:     ckpt.Files{Modified: []string{"feature_02/spec.md"}},
		Resume:    ckpt.Resume{Resumable: true, NextSteps: []string{"Write checklist.md"}},
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(ckpt.DefaultInterval)},
		StartedAt: t0, UpdatedAt: t0.Add(3 * time.Minute),
	}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Fatalf("fold (-want +got):\n%s", diff)
	}
}

func TestApplyRefusesBadEvents(t *testing.T) {
	created := history(ev(ckpt.EventCreated, 0, ckpt.Created{Patch: ckpt.Patch{MaxCycles: ptr(1)}}))
	cases := []struct {
		name string
		e    ckpt.Event
		want error
	}{
		{"created twice", ev(ckpt.EventCreated, 1, nil), ckpt.ErrExists},
		{"bad status", ev(ckpt.EventStatus, 1, ckpt.StatusChange{Status: "sleeping"}), ckpt.ErrInvalid},
		{"bad step status", ev(ckpt.EventStep, 1, ckpt.StepChange{ID: "x", Status: "halfway"}), ckpt.ErrInvalid},
		{"step without id", ev(ckpt.EventStep, 1, ckpt.StepChange{Status: ckpt.StepDone}), ckpt.ErrInvalid},
		{"empty decision", ev(ckpt.EventDecision, 1, ckpt.DecisionData{}), ckpt.ErrInvalid},
		{"clear no blocker", ev(ckpt.EventBlocker, 1, ckpt.BlockerChange{Clear: true}), ckpt.ErrInvalid},
		{"bad progress", ev(ckpt.EventUpdate, 1, ckpt.Patch{Progress: &ckpt.ProgressSet{Done: 4, Total: 3}}), ckpt.ErrInvalid},
		{"bad parent", ev(ckpt.EventUpdate, 1, ckpt.Patch{Parent: ptr("../up")}), ckpt.ErrInvalid},
		{"unknown type", ev("explode", 1, nil), ckpt.ErrInvalid},
		{"bad data", ckpt.Event{Type: ckpt.EventStep, At: t0, Data: json.RawMessage(`[1,2]`)}, ckpt.ErrInvalid},
	}
	for _, tc := range cases {
		c, err := ckpt.Fold("x", created)
		if err != nil {
			t.Fatal(err)
		}
		tc.e.Seq = 2
		if _, err := ckpt.Apply("x", c, tc.e); !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := ckpt.Apply("x", nil, history(ev(ckpt.EventStep, 0, ckpt.StepChange{ID: "a"}))[0]); !errors.Is(err, ckpt.ErrNotFound) {
		t.Errorf("event before created: %v, want ErrNotFound", err)
	}
	c, _ := ckpt.Fold("x", created)
	if _, err := ckpt.Apply("x", c, history(ev(ckpt.EventNote, 0, ckpt.Note{Text: "n"}))[0]); !errors.Is(err, ckpt.ErrCorrupt) {
		t.Errorf("seq out of order: %v, want ErrCorrupt", err)
	}
	// Cycles stop at their maximum.
	c, _ = ckpt.Fold("x", created)
	cyc := ev(ckpt.EventCycle, 1, nil)
	cyc.Seq = 2
	if c, err := ckpt.Apply("x", c, cyc); err != nil || c.Cycles.Count != 1 {
		t.Fatalf("first cycle: %v", err)
	} else {
		cyc.Seq = 3
		if _, err := ckpt.Apply("x", c, cyc); !errors.Is(err, ckpt.ErrCycleLimit) {
			t.Fatalf("cycle past max: %v, want ErrCycleLimit", err)
		}
	}
}

func TestBlockersAndErrorsDriveStatus(t *testing.T) {
	c, err := ckpt.Fold("x", history(
		ev(ckpt.EventCreated, 0, nil),
		ev(ckpt.EventBlocker, 1, ckpt.BlockerChange{Text: "Waiting for DISCOVERY.md"}),
		ev(ckpt.EventError, 2, ckpt.ErrorChange{Type: "dependency_missing", Message: "no PDF", Blocking: true}),
		ev(ckpt.EventBlocker, 3, ckpt.BlockerChange{ID: "b1", Clear: true}),
	))
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != ckpt.StatusBlocked {
		t.Fatalf("a blocking error is still active: status %s, want blocked", c.Status)
	}
	c, err = ckpt.Apply("x", c, ckpt.Event{Seq: 5, Type: ckpt.EventError, At: t0, Data: json.RawMessage(`{"clear":true}`)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != ckpt.StatusInProgress || len(c.ActiveBlockers()) != 0 || len(c.ActiveErrors()) != 0 {
		t.Fatalf("after clearing everything: status %s, %d blockers, %d errors", c.Status, len(c.ActiveBlockers()), len(c.ActiveErrors()))
	}
}

func TestResumesWithoutProgressAndRestart(t *testing.T) {
	events := history(
		ev(ckpt.EventCreated, 0, ckpt.Created{Steps: []ckpt.Step{{ID: "a"}, {ID: "b"}}}),
		ev(ckpt.EventResumed, 1, ckpt.SessionChange{Session: ckpt.Session{ID: "s2"}}),
		ev(ckpt.EventResumed, 2, ckpt.SessionChange{Session: ckpt.Session{ID: "s3"}}),
	)
	c, err := ckpt.Fold("x", events)
	if err != nil {
		t.Fatal(err)
	}
	if c.ResumesWithoutProgress != 2 || c.Session.Number != 3 || c.Session.ID != "s3" {
		t.Fatalf("after two resumes: %d resumes without progress, session %+v", c.ResumesWithoutProgress, c.Session)
	}
	_, err = ckpt.Apply("x", c, ckpt.MustEvent(ckpt.EventStep, t0, ckpt.Actor{}, ckpt.StepChange{ID: "a", Status: ckpt.StepDone}))
	if err == nil {
		t.Fatal("an event without its seq was applied")
	}
	c, _ = ckpt.Fold("x", events)
	e := ckpt.MustEvent(ckpt.EventStep, t0.Add(3*time.Minute), ckpt.Actor{}, ckpt.StepChange{ID: "a", Status: ckpt.StepDone})
	e.Seq = 4
	if c, err = ckpt.Apply("x", c, e); err != nil || c.ResumesWithoutProgress != 0 {
		t.Fatalf("progress resets the count: %v, %d", err, c.ResumesWithoutProgress)
	}
	r := ckpt.MustEvent(ckpt.EventRestarted, t0.Add(4*time.Minute), ckpt.Actor{}, ckpt.Restart{ArchivedAs: "x_aborted_1"})
	r.Seq = 5
	if c, err = ckpt.Apply("x", c, r); err != nil {
		t.Fatal(err)
	}
	if c.Progress.Done != 0 || c.Steps[0].Status != ckpt.StepPending || c.Session.Number != 4 || c.Status != ckpt.StatusInProgress {
		t.Fatalf("restart did not reset the work: %+v", c)
	}
}

func TestSnapshotEventsReplaceStateButKeepIdentity(t *testing.T) {
	snap := ckpt.Checkpoint{ID: "elsewhere", Rev: 99, Title: "Imported", Status: ckpt.StatusWaiting,
		Steps: []ckpt.Step{{ID: "PLAN", Status: ckpt.StepDone}, {ID: "EXECUTE", Status: ckpt.StepPending}},
		Meta:  map[string]json.RawMessage{"loop_state": json.RawMessage(`{"x":1}`)}}
	c, err := ckpt.Fold("tracks/a", history(ev(ckpt.EventImported, 0, ckpt.Snapshot{State: snap, Source: "superpowers:metadata.json"})))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "tracks/a" || c.Rev != 1 || c.Title != "Imported" || c.Progress.Percent != 50 || string(c.Meta["loop_state"]) != `{"x":1}` {
		t.Fatalf("imported state: %+v", c)
	}
	snap.UpdatedAt = t0.Add(-2 * time.Hour)
	c, err = ckpt.Fold("tracks/a", history(ev(ckpt.EventImported, 0, ckpt.Snapshot{State: snap})))
	if err != nil || !c.UpdatedAt.Equal(t0.Add(-2*time.Hour)) {
		t.Fatalf("an imported file's last change must survive the import (a quiet agent stays quiet): %v %s", err, c.UpdatedAt)
	}
	c, err = ckpt.Apply("tracks/a", c, ckpt.Event{Seq: 2, Type: ckpt.EventRestored, At: t0, Data: mustJSON(ckpt.Snapshot{State: snap, Rev: 1})})
	if err != nil || !c.UpdatedAt.Equal(t0) {
		t.Fatalf("a restore is a change made now: %v %s", err, c.UpdatedAt)
	}
	bad := snap
	bad.Status = "PAUSED"
	if _, err := ckpt.Fold("tracks/a", history(ev(ckpt.EventImported, 0, ckpt.Snapshot{State: bad}))); !errors.Is(err, ckpt.ErrInvalid) {
		t.Fatalf("snapshot with a raw seed status: %v, want ErrInvalid (adapters map statuses)", err)
	}
}

func TestParseStatusSeedWords(t *testing.T) {
	for word, want := range map[string]ckpt.Status{
		"NOT_STARTED": ckpt.StatusPending, "IN_PROGRESS": ckpt.StatusInProgress, "PASSED": ckpt.StatusDone,
		"COMPLETE": ckpt.StatusDone, "complete": ckpt.StatusDone, "completed": ckpt.StatusDone, "PAUSED": ckpt.StatusWaiting,
		"WAITING": ckpt.StatusWaiting, "BLOCKED": ckpt.StatusBlocked, "FAILED": ckpt.StatusFailed, "abandoned": ckpt.StatusAbandoned,
	} {
		if got, err := ckpt.ParseStatus(word); err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %q, %v; want %q", word, got, err, want)
		}
	}
	if _, err := ckpt.ParseStatus("sleeping"); !errors.Is(err, ckpt.ErrInvalid) {
		t.Errorf("unknown status: %v", err)
	}
}

func TestLiveness(t *testing.T) {
	c := &ckpt.Checkpoint{Status: ckpt.StatusInProgress, UpdatedAt: t0, Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(15 * time.Minute)}}
	for _, tc := range []struct {
		after time.Duration
		th    ckpt.Thresholds
		want  ckpt.Liveness
	}{
		{29 * time.Minute, ckpt.Thresholds{}, ckpt.Live},
		{31 * time.Minute, ckpt.Thresholds{}, ckpt.Warn},
		{61 * time.Minute, ckpt.Thresholds{}, ckpt.Stale},
		{11 * time.Minute, ckpt.Thresholds{Warn: 10 * time.Minute, Stale: 30 * time.Minute}, ckpt.Warn},
	} {
		if got, _ := ckpt.LivenessOf(c, t0.Add(tc.after), tc.th); got != tc.want {
			t.Errorf("after %s with %+v: %s, want %s", tc.after, tc.th, got, tc.want)
		}
	}
	c.Heartbeat.LastBeat = t0.Add(50 * time.Minute)
	if got, age := ckpt.LivenessOf(c, t0.Add(61*time.Minute), ckpt.Thresholds{}); got != ckpt.Live || age != 11*time.Minute {
		t.Errorf("a recent heartbeat keeps it live: %s %s", got, age)
	}
	c.Status = ckpt.StatusDone
	if got, _ := ckpt.LivenessOf(c, t0.Add(48*time.Hour), ckpt.Thresholds{}); got != ckpt.NotLive {
		t.Errorf("done checkpoints do not go stale: %s", got)
	}
}

// FuzzApply feeds arbitrary event payloads (they arrive from hooks, MCP
// clients and HTTP bodies) to the fold: it must never panic, must refuse with
// one of the package's errors, and whatever it accepts must survive a JSON
// round trip of the state.
func FuzzApply(f *testing.F) {
	for _, s := range []struct{ typ, data string }{
		{"step", `{"id":"a","status":"done"}`}, {"update", `{"progress":{"done":1,"total":2},"meta":{"k":null}}`},
		{"blocker", `{"text":"x"}`}, {"blocker", `{"clear":true}`}, {"imported", `{"state":{"status":"done"}}`},
		{"cycle", ``}, {"session.resumed", `{}`}, {"taken_over", `{"to":{"id":"n"}}`}, {"error", `{"message":"m","blocking":true}`},
		{"accept", `{"id":"t","met":true}`}, {"restored", `{"state":{"status":"pending","steps":[{"id":""}]}}`}, {"update", `{"interval":-5}`},
		{"told", `{"text":"hi"}`}, {"told", `{"text":" "}`}, {"delivered", `{"ids":["m1"]}`},
	} {
		f.Add(s.typ, []byte(s.data))
	}
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		c, err := ckpt.Fold("x", history(ev(ckpt.EventCreated, 0, ckpt.Created{Steps: []ckpt.Step{{ID: "a"}}})))
		if err != nil {
			t.Fatal(err)
		}
		e := ckpt.Event{Seq: 2, At: t0, Type: ckpt.EventType(typ), Data: data}
		got, err := ckpt.Apply("x", c, e)
		if err != nil {
			for _, known := range []error{ckpt.ErrInvalid, ckpt.ErrCycleLimit, ckpt.ErrExists, ckpt.ErrCorrupt, ckpt.ErrConflict} {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("Apply error %v wraps none of the package's errors", err)
		}
		if got.Rev != 2 || !got.Status.Valid() {
			t.Fatalf("accepted event left rev %d status %q", got.Rev, got.Status)
		}
		b, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("state does not marshal: %v", err)
		}
		var back ckpt.Checkpoint
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("state does not unmarshal: %v", err)
		}
	})
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
