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
	}
}
