package filestore

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// FuzzDecodeSummary: whenever the index's fast summary decoder accepts an
// input, encoding/json decodes it to the same summary.
func FuzzDecodeSummary(f *testing.F) {
	at := time.Date(2026, 1, 15, 14, 30, 0, 123456789, time.UTC)
	done := at.Add(time.Hour)
	for _, s := range []ckpt.Summary{
		{ID: "kai-7/secondary-a", Rev: 4, Parent: "kai-7", Labels: []string{"spec", "ü"}, Agent: ckpt.Agent{ID: "kai-7", Type: "secondary", Name: "Secondary-A"},
			SessionID: "s1", Title: "Schedule fetcher spec", TaskID: "T1", Stage: "S2", Phase: "P2", Status: ckpt.StatusInProgress,
			CurrentStep: "writing", Progress: ckpt.Progress{Done: 1, Total: 3, Percent: 33.3},
			Heartbeat: ckpt.Heartbeat{LastBeat: at, Interval: ckpt.Duration(5 * time.Minute)}, ActiveBlockers: 2, BlockingErrors: 1,
			StartedAt: at, UpdatedAt: at},
		{ID: "a", Status: ckpt.StatusDone, Partial: true, Archived: &ckpt.Archive{Reason: "complete", At: at, From: "b"}, CompletedAt: &done},
		{ID: "x", Title: "quote \" and \\ and \n"},
	} {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":"a","rev":1e3,"progress":{"percent":-0.5e-3}}`))
	f.Add([]byte(`{"id":"a","rev":01}`))
	f.Add([]byte(`{"id":"a","ID":"b"}`))
	f.Add([]byte(`{"archived":{"reason":"x"},"archived":{"from":"y"}}`))
	f.Add([]byte(`{"id":"a","labels":[],"heartbeat":{"interval":"1h"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast ckpt.Summary
		if !decodeSummary(b, &fast) {
			return
		}
		var slow ckpt.Summary
		if err := json.Unmarshal(b, &slow); err != nil {
			t.Fatalf("the fast decoder accepted %q, encoding/json refuses it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q decodes to\n%+v\nencoding/json gives\n%+v", b, fast, slow)
		}
	})
}

// TestDecodeSummaryTakesTheIndexsForm: the summaries the index holds are
// decoded by the fast decoder, not handed to encoding/json.
func TestDecodeSummaryTakesTheIndexsForm(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "fast/a", createEvent())
	appendOK(t, s, "fast/a", noteEvent("one"))
	c, err := s.Get(t.Context(), "fast/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := entryOf(ckpt.Event{Seq: c.Rev}, 1, c)
	b, err := json.Marshal(e.Summary)
	if err != nil {
		t.Fatal(err)
	}
	var got ckpt.Summary
	if !decodeSummary(b, &got) {
		t.Fatalf("the fast decoder refused the index's summary %s", b)
	}
	if !reflect.DeepEqual(&got, e.Summary) {
		t.Errorf("decoded %+v, want %+v", got, *e.Summary)
	}
}

// BenchmarkDecodeSummary compares the index's fast summary decoder with
// encoding/json on one summary as the index holds it.
func BenchmarkDecodeSummary(b *testing.B) {
	at := time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)
	line, _ := json.Marshal(ckpt.Summary{ID: "agent-07/task-000123", Rev: 4, Labels: []string{"spec"}, Agent: ckpt.Agent{ID: "agent-07", Name: "Secondary-A"},
		Title: "Schedule fetcher spec", Status: ckpt.StatusInProgress, CurrentStep: "writing acceptance criteria",
		Progress: ckpt.Progress{Done: 1, Total: 3, Percent: 33.3}, StartedAt: at, UpdatedAt: at})
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			var s ckpt.Summary
			if !decodeSummary(line, &s) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var s ckpt.Summary
			if err := json.Unmarshal(line, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
