package pgstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestFastPathWritesEveryColumn: the prepared fast statement, whose
// parameters pgstore encodes itself (fastwire.go), writes what the
// locking path would: after appends that change every listed column
// (labels that need quoting in a text[] literal, and none; status, agent,
// parent; nanosecond times), keyed and unkeyed, after a beat, Check finds
// the state row, its summary columns, the keys and the history agreeing;
// a fresh Store reads the state each append returned, liveness included;
// and a label filter finds the checkpoint by each label.
func TestFastPathWritesEveryColumn(t *testing.T) {
	ctx := context.Background()
	s, dsn := openStore(t, "pool_max_conns=1")
	defer s.Close()
	const id = "wire/every-column"
	mustAppend(t, s, id, created("every column"))
	for i := range pgstore.ColdCalls { // the unprepared first statements
		mustAppend(t, s, id, note(fmt.Sprint("cold ", i)))
	}
	labels := []string{`plain`, `with "quotes"`, `back\slash`, `{braces},comma`, `NULL`, ``, `ünï 漢字`, `sp ace`}
	str := func(v string) *string { return &v }
	status := func(v ckpt.Status) *ckpt.Status { return &v }
	at := time.Now().Add(-time.Second).Truncate(time.Second).Add(123456789 * time.Nanosecond)
	patches := []ckpt.Patch{
		{AddLabels: labels},
		{Status: status(ckpt.StatusBlocked), StatusReason: str("waits")},
		{Agent: &ckpt.Agent{ID: "agent-ü", Name: `Name "x"`}, Parent: str("wire/parent")},
		{RemoveLabels: labels},
		{AddLabels: []string{"last"}, Notes: str("tail")},
	}
	var last ckpt.AppendResult
	for i, p := range patches {
		if i == 2 {
			if err := s.Beat(ctx, id, ckpt.Signal{At: time.Now(), State: ckpt.PresenceWaiting, Reason: "a prompt"}); err != nil {
				t.Fatal(err)
			}
		}
		e := ckpt.MustEvent(ckpt.EventUpdate, at.Add(time.Duration(i)*time.Millisecond), ckpt.Actor{Agent: "test"}, p)
		if i%2 == 1 {
			e.Key = fmt.Sprintf("key-%d", i)
		}
		fast := pgstore.FastAppends(s)
		last = mustAppend(t, s, id, e)
		if pgstore.FastAppends(s) != fast+1 {
			t.Fatalf("append %d did not take the fast path", i)
		}
		if i == 0 {
			checkLabelsListed(t, s, id, labels)
		}
	}
	report, err := s.Check(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Problems) != 0 {
		t.Fatalf("check after fast appends: %+v", report.Problems)
	}
	fresh := openSecond(t, dsn)
	got, err := fresh.Get(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, last.State) {
		t.Fatalf("the fast append returned\n%+v\na fresh Store reads\n%+v", last.State, got)
	}
	if last.State.Heartbeat.Presence == nil || last.State.Heartbeat.Presence.State != ckpt.PresenceWaiting || last.State.Heartbeat.LastBeat.IsZero() {
		t.Fatalf("the fast append returned liveness %+v, want the beat's", last.State.Heartbeat)
	}
	if pgstore.PlanModeSets(s) != 1 {
		t.Fatalf("plan_cache_mode set by %d statements on one connection, want 1", pgstore.PlanModeSets(s))
	}
}

// checkLabelsListed: a label filter finds id by each of labels.
func checkLabelsListed(t *testing.T, s *pgstore.Store, id string, labels []string) {
	t.Helper()
	for _, l := range labels {
		if l == "" {
			continue // an empty filter is no filter
		}
		page, err := s.List(context.Background(), ckpt.ListOptions{Filter: ckpt.Filter{Label: l}})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 || page.Items[0].ID != id {
			t.Fatalf("label %q lists %+v, want %s", l, page.Items, id)
		}
	}
}
