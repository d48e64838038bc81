package filestore

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ckpt-dev/ckpt"
)

// TestIndexSummaryDecodes: a summary as the index keeps it decodes to the
// summary that was written (wire.Unmarshal; that this form is read by the
// generated code is FuzzDecodeSummaryJSON's and TestEveryFieldRoundTrips',
// in internal/wire).
func TestIndexSummaryDecodes(t *testing.T) {
	s := newStore(t, Options{})
	appendOK(t, s, "fast/a", createEvent())
	appendOK(t, s, "fast/a", noteEvent("one"))
	c, err := s.Get(t.Context(), "fast/a", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := entryOf(ckpt.Event{Seq: c.Rev}, 1, c)
	line, err := encodeIndexLine(e)
	if err != nil {
		t.Fatal(err)
	}
	ie, ok := parseIndexLine(line[:len(line)-1], indexVersion)
	if !ok {
		t.Fatalf("the index line %q does not parse", line)
	}
	var got ckpt.Summary
	if err := ie.summaryInto(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, e.Summary) {
		t.Errorf("decoded %+v, want %+v", got, *e.Summary)
	}
	b, _ := json.Marshal(e.Summary)
	if string(ie.summary) != string(b) {
		t.Errorf("the index keeps %s, want json.Marshal's %s", ie.summary, b)
	}
}
