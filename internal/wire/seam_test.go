package wire_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// The tests here swap the root package's process-wide codec: none of the
// package's tests runs in parallel.

// withJSON runs fn with the root package on encoding/json, then restores
// the codec installed before.
func withJSON(fn func()) {
	prev := ckpt.SetJSONCodec(ckpt.JSONCodec{})
	defer ckpt.SetJSONCodec(prev)
	fn()
}

// TestRootPackageUsesTheWireCodec: linking the wire installs its codec in
// the root package, and NewEvent, EncodeLine, DecodeLine and Apply go
// through it (so a ckpt update process pays none of encoding/json's
// first use for them).
func TestRootPackageUsesTheWireCodec(t *testing.T) {
	installed := ckpt.SetJSONCodec(ckpt.JSONCodec{})
	ckpt.SetJSONCodec(installed)
	if installed.Marshal == nil || installed.Unmarshal == nil {
		t.Fatal("linking internal/wire installed no codec in the root package")
	}
	var marshals, unmarshals int
	ckpt.SetJSONCodec(ckpt.JSONCodec{
		Marshal:   func(v any) ([]byte, error) { marshals++; return wire.Marshal(v) },
		Unmarshal: func(b []byte, v any) error { unmarshals++; return wire.Unmarshal(b, v) },
	})
	defer ckpt.SetJSONCodec(installed)
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	title := "ship it"
	created := ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "kai"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	created.Seq = 1
	line, _, err := ckpt.EncodeLine(created)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ckpt.DecodeLine(line)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ckpt.Apply("kai/a", nil, e)
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != title {
		t.Fatalf("title %q after the round trip, want %q", c.Title, title)
	}
	if marshals != 2 || unmarshals != 2 {
		t.Fatalf("the codec was asked to marshal %d times and unmarshal %d; want 2 and 2 (payload and line; line and payload)", marshals, unmarshals)
	}
}

// payloadOf is a new zero value of the payload type of event type t, as
// event.go names them.
func payloadOf(t ckpt.EventType) any {
	switch t {
	case ckpt.EventCreated:
		return new(ckpt.Created)
	case ckpt.EventUpdate:
		return new(ckpt.Patch)
	case ckpt.EventStatus:
		return new(ckpt.StatusChange)
	case ckpt.EventStep:
		return new(ckpt.StepChange)
	case ckpt.EventDecision:
		return new(ckpt.DecisionData)
	case ckpt.EventBlocker:
		return new(ckpt.BlockerChange)
	case ckpt.EventError:
		return new(ckpt.ErrorChange)
	case ckpt.EventAccept:
		return new(ckpt.AcceptChange)
	case ckpt.EventCycle:
		return new(ckpt.CycleChange)
	case ckpt.EventRestored, ckpt.EventImported, ckpt.EventSynced:
		return new(ckpt.Snapshot)
	case ckpt.EventNote:
		return new(ckpt.Note)
	}
	return new(ckpt.Patch)
}

var seamTypes = []ckpt.EventType{
	ckpt.EventCreated, ckpt.EventUpdate, ckpt.EventStatus, ckpt.EventStep, ckpt.EventDecision,
	ckpt.EventBlocker, ckpt.EventError, ckpt.EventAccept, ckpt.EventCycle, ckpt.EventResumed,
	ckpt.EventTakenOver, ckpt.EventRestarted, ckpt.EventRestored, ckpt.EventImported,
	ckpt.EventSynced, ckpt.EventArchived, ckpt.EventNote, ckpt.EventCode, ckpt.EventTold, ckpt.EventDelivered,
}

// seamResult is everything the root package derives from one event
// through its codec: the payload NewEvent writes, the history line, the
// event read back, and the state Apply folds, with every error's text.
type seamResult struct {
	Data      []byte
	DataErr   string
	Line      []byte
	Sum       string
	LineErr   string
	Decoded   ckpt.Event
	DecodeErr string
	State     *ckpt.Checkpoint
	ApplyErr  string
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// throughRoot runs e (its Data arbitrary bytes) through the root package.
func throughRoot(base *ckpt.Checkpoint, e ckpt.Event) seamResult {
	var r seamResult
	if p := payloadOf(e.Type); json.Unmarshal(e.Data, p) == nil {
		ev, err := ckpt.NewEvent(e.Type, e.At, e.Actor, reflect.ValueOf(p).Elem().Interface())
		r.Data, r.DataErr = ev.Data, errText(err)
	}
	var err error
	r.Line, r.Sum, err = ckpt.EncodeLine(e)
	r.LineErr = errText(err)
	if err == nil {
		r.Decoded, err = ckpt.DecodeLine(r.Line)
		r.DecodeErr = errText(err)
	}
	var c *ckpt.Checkpoint
	if e.Type != ckpt.EventCreated && base != nil {
		copied := *base
		c = &copied
		e.Seq = c.Rev + 1
	}
	r.State, err = ckpt.Apply("kai/a", c, e)
	r.ApplyErr = errText(err)
	return r
}

// FuzzRootCodec holds the root package to the same results with the wire
// codec installed as with encoding/json: for any event data, NewEvent's
// payload, EncodeLine's bytes and checksum, DecodeLine's event and Apply's
// state (a base state is shallow-copied per run, and Apply works on it in
// place, so each side gets its own), with the same error texts.
func FuzzRootCodec(f *testing.F) {
	title := "t"
	f.Add(uint8(0), []byte(`{"title":"a <b> & c","steps":[{"id":"s1","title":"S"}]}`), "kai")
	f.Add(uint8(1), []byte(`{"title":"x","next_steps":["a"],"review_scores":{"q":0.5},"meta":{"k":[1,"\u2028"]}}`), "")
	f.Add(uint8(3), []byte(`{"id":"s1","status":"done"}`), "a\"b")
	f.Add(uint8(12), []byte(fmt.Sprintf(`{"state":{"id":"kai/a","title":%q},"rev":1}`, title)), "x")
	f.Add(uint8(1), []byte(`{"title":null,"TITLE":"y","title":"z"}`), "")
	f.Add(uint8(4), []byte(`{"text": "spaced"}`), "")
	f.Add(uint8(2), []byte(`not json`), "")
	f.Add(uint8(16), []byte(nil), "")
	at := time.Date(2026, 11, 27, 8, 0, 0, 123, time.FixedZone("x", 3600))
	created := ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{}, ckpt.Created{
		Patch: ckpt.Patch{Title: &title},
		Steps: []ckpt.Step{{ID: "s1", Title: "S"}},
	})
	created.Seq = 1
	f.Fuzz(func(t *testing.T, kind uint8, data []byte, agent string) {
		base, err := ckpt.Apply("kai/a", nil, created)
		if err != nil {
			t.Fatal(err)
		}
		e := ckpt.Event{Seq: 1, At: at, Type: seamTypes[int(kind)%len(seamTypes)], Actor: ckpt.Actor{Agent: agent}, Data: data, Prev: agent}
		baseJSON := *base
		got := throughRoot(base, e)
		var want seamResult
		withJSON(func() { want = throughRoot(&baseJSON, e) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s event with data %q:\nwire codec:    %+v\nencoding/json: %+v", e.Type, data, got, want)
		}
	})
}
