package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// The append's answer is byte for byte what encoding/json wrote before
// the codec took over: clients of any version read it the same.
func TestAppendAnswerIsEncodingJSONs(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 123456789, time.UTC)
	title, step := "a <title> & more", "step\n2"
	c := &ckpt.Checkpoint{ID: "kai-7/a", Rev: 3, Title: title, CurrentStep: step, Status: ckpt.StatusInProgress,
		Labels: []string{"x", "ü"}, StartedAt: at, UpdatedAt: at.Add(time.Second),
		Steps: []ckpt.Step{{ID: "s1", Title: "one", Status: "done", CompletedAt: &at}},
		Meta:  map[string]json.RawMessage{"k": json.RawMessage(`{"a": [1, 2]}`)}}
	e := ckpt.MustEvent(ckpt.EventUpdate, at, ckpt.Actor{Agent: "kai-7"}, ckpt.Patch{CurrentStep: &step})
	e.Seq, e.Key, e.Prev, e.Sum = 3, "k-1", "prevsum", "0123abcd"
	for _, res := range []httpapi.AppendResult{
		{State: c, Event: httpapi.WireEvent(e)},
		{State: c, Event: httpapi.WireEvent(e), Replayed: true, Warnings: []string{"cut a torn line <x>"}},
		{State: nil, Event: httpapi.Event{Event: e}},
		{State: &ckpt.Checkpoint{}, Event: httpapi.Event{}},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(res); err != nil {
			t.Fatal(err)
		}
		got, err := appendAnswer(nil, res)
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendAnswer:\n got %s (%v)\nwant %s", got, err, want.Bytes())
		}
	}
}

// FuzzDecodeEvent: an append's body decodes through the codec to exactly
// what decodeBody (encoding/json) reads, and is refused exactly when
// decodeBody refuses it, with the same words.
func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"note","data":{"text":"x"}}`,
		`{"type":"note","data":{"text":"x"},"sum":"abc"}`,
		`{"type":"note","SUM":1}`,
		`{"type":"note","\u0073um":"x"}`,
		`{"type":"update","at":"2026-11-27T08:00:00Z","actor":{"agent":"a"},"key":"k","data":{"current_step":"s"}}`,
		`{"type":"note"}{"type":"note"}`,
		`{"type":"note"} `,
		"{\"type\":\"\xff\"}",
		`{"seq":"x"}`,
		`[1]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var got, want httpapi.Event
		gerr := decodeEvent(body, &got)
		werr := decodeBody(body, &want)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("decodeEvent(%q) = %v, decodeBody = %v", body, gerr, werr)
		}
		if gerr != nil {
			if !errors.Is(gerr, ckpt.ErrInvalid) {
				t.Fatalf("refused with %v, want invalid", gerr)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeEvent(%q) = %+v, decodeBody = %+v", body, got, want)
		}
	})
}
