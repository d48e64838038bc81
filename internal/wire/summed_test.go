package wire_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// FuzzReadSummed: what ReadSummed accepts, encoding/json reads into the
// API's event (httpapi.Event) to the same event and sum.
func FuzzReadSummed(f *testing.F) {
	for _, s := range []string{
		`{"seq":2,"at":"2026-11-27T08:00:00Z","type":"note","actor":{"agent":"a"},"key":"k-1","data":{"text":"x"},"prev":"p"}`,
		`{"seq":2,"at":"2026-11-27T08:00:00Z","type":"note","data":{"text":"x"},"prev":"p","sum":"0123abcd"}`,
		`{"seq":1,"type":"note","sum":"a","sum":"b"}`,
		`{"seq":1,"SUM":"a","sum":"b"}`,
		`{"seq":1,"data":{"album":1},"sum":"b"}`,
		`{"seq":1,"sum":"a\"b"}`, `{"seq":1,"sum":"a\u0062"}`, `{,"sum":"a"}`, `{"seq":1,,"sum":"a"}`,
		`{"seq":1,"sum":1}`, `{"seq":1} `, `{"seq":"x","sum":"a"}`, `{"sum":"a"}`, `{}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e, sum, ok := wire.ReadSummed(data)
		if !ok {
			return
		}
		var want httpapi.Event
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("ReadSummed accepted %q, which encoding/json refuses: %v", data, err)
		}
		if got := (httpapi.Event{Event: e, Sum: sum}); !reflect.DeepEqual(got, want) {
			t.Fatalf("ReadSummed(%q) = %+v, encoding/json reads %+v", data, got, want)
		}
	})
}

// The events the server and the client write (json.Marshal of the API's
// event, with and without a sum) are read by the codec, not handed back.
func TestReadSummedReadsTheAPIsEvents(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 123456789, time.UTC)
	e := ckpt.MustEvent(ckpt.EventNote, at, ckpt.Actor{Agent: "kai-7"}, ckpt.Note{Text: "line\nwith <escapes> & more"})
	e.Seq, e.Key, e.Prev = 3, "k-1", "prevsum"
	for _, sum := range []string{"", "0123abcd"} {
		e.Sum = sum
		data, err := json.Marshal(httpapi.WireEvent(e))
		if err != nil {
			t.Fatal(err)
		}
		got, gotSum, ok := wire.ReadSummed(data)
		if !ok {
			t.Fatalf("ReadSummed(%s) handed it back", data)
		}
		got.Sum = gotSum
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("ReadSummed(%s) = %+v, want %+v", data, got, e)
		}
	}
}

// FuzzDecodePrefix: what DecodePrefix reads from the start of the input
// is what encoding/json reads from those bytes.
func FuzzDecodePrefix(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","rev":2,"title":"t\n\u003c"},"event":{}`,
		`{"id":"a"}`, `{"id":"a"} `, `{"id":"a"`, `null`, `{}x`, `{"rev":"x"}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got ckpt.Checkpoint
		n, ok := wire.DecodePrefix(data, &got)
		if !ok {
			if !reflect.DeepEqual(got, ckpt.Checkpoint{}) {
				t.Fatalf("DecodePrefix(%q) failed and left %+v", data, got)
			}
			return
		}
		var want ckpt.Checkpoint
		if err := json.Unmarshal(data[:n], &want); err != nil {
			t.Fatalf("DecodePrefix(%q) took %q, which encoding/json refuses: %v", data, data[:n], err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodePrefix(%q) = %+v, encoding/json reads %+v", data, got, want)
		}
	})
}
