package remote

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
)

// The append's body is encoding/json's bytes, and its answer reads to
// what encoding/json reads, whatever the codec does underneath.
func TestAppendWireIsEncodingJSONs(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 5, time.UTC)
	step := "a <step> & \u2028 more"
	e := ckpt.MustEvent(ckpt.EventUpdate, at, ckpt.Actor{Agent: "kai-7"}, ckpt.Patch{CurrentStep: &step})
	for _, sum := range []string{"", "00ff"} {
		in := httpapi.WireEvent(e)
		in.Sum, in.Key = sum, "k-1"
		want, _ := json.Marshal(in)
		got, err := eventBody(in).encodeBody()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("eventBody:\n got %s (%v)\nwant %s", got, err, want)
		}
	}
	c := &ckpt.Checkpoint{ID: "kai-7/a", Rev: 2, CurrentStep: step, StartedAt: at, UpdatedAt: at,
		Steps: []ckpt.Step{{ID: "s", Status: "done", CompletedAt: &at}}}
	stored := e
	stored.Seq, stored.Sum, stored.Prev = 2, "abcd", "ef01"
	for _, res := range []httpapi.AppendResult{
		{State: c, Event: httpapi.WireEvent(stored), Replayed: true, Warnings: []string{"w"}},
		{Event: httpapi.WireEvent(stored)},
		{State: c, Event: httpapi.WireEvent(stored), Replayed: true},
		{State: c, Event: httpapi.Event{Event: e}},
	} {
		data, _ := json.Marshal(res)
		indented, _ := json.MarshalIndent(res, "", "  ") // another server's form
		for _, in := range [][]byte{data, append(data, '\n'), indented} {
			var want httpapi.AppendResult
			if err := json.Unmarshal(in, &want); err != nil {
				t.Fatal(err)
			}
			var got appendAnswer
			if err := got.decodeAnswer(in); err != nil || !reflect.DeepEqual(got.AppendResult, want) {
				t.Errorf("decodeAnswer(%s):\n got %+v (%v)\nwant %+v", in, got.AppendResult, err, want)
			}
		}
		// The server's own form, warnings aside, is read in one pass.
		if _, ok := readServersAnswer(data); ok == (len(res.Warnings) > 0) {
			t.Errorf("readServersAnswer(%s): ok %v", data, ok)
		}
	}
}

// FuzzDecodeAnswer: an append's answer, whatever its bytes, reads to what
// encoding/json reads, and fails exactly when encoding/json fails.
func FuzzDecodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"state":{"id":"a","rev":2,"title":"t"},"event":{"seq":2,"at":"2026-11-27T08:00:00Z","type":"note","data":{"text":"x"},"prev":"p","sum":"abcd"},"replayed":true,"warnings":["w"]}`,
		`{"state":null,"event":{"seq":1,"type":"note","sum":"a"}}`,
		`{"state":{"id":"a","rev":1},"event":{"seq":1,"type":"note","sum":"a"},"replayed":true}`,
		`{"state":null,"event":{"seq":1},"x":{"seq":2,"sum":"a"},"replayed":true}`,
		`{"state":null,"event":{"seq":1,"SUM":"a"},"replayed":false}`,
		`{"state":{},"event":{"seq":1,"sum":"a\u0062"},"replayed":1}`,
		`{"state":1,"event":{}}`, `{"event":{"seq":"x"}}`, `{"event":{,"sum":"a"}}`, `{}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want httpapi.AppendResult
		werr := json.Unmarshal(data, &want)
		var got appendAnswer
		gerr := got.decodeAnswer(data)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("decodeAnswer(%q) = %v, encoding/json %v", data, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got.AppendResult, want) {
			t.Fatalf("decodeAnswer(%q):\n got %+v\nwant %+v", data, got.AppendResult, want)
		}
	})
}
