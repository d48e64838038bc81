package wire_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

func fuzzPatch(s1, s2 string, n int64, f float64, flags uint16) ckpt.Patch {
	var p ckpt.Patch
	str := func(bit uint16, s string) *string {
		if flags&bit != 0 {
			return &s
		}
		return nil
	}
	p.Title, p.TaskID, p.Parent, p.Stage = str(1, s1), str(2, s2), str(1, s2), str(4, "")
	p.Phase, p.CurrentStep, p.StatusReason = str(8, s1), str(16, s2), str(2, s1)
	p.LastProcessed, p.NextToProcess, p.Notes, p.Instructions = str(32, s1), str(64, s2), str(16, s1), str(8, s2)
	if flags&128 != 0 {
		st, b, m := ckpt.Status(s1), flags&1 != 0, int(n)
		d := ckpt.Duration(n)
		p.Status, p.Resumable, p.MaxCycles, p.Interval = &st, &b, &m, &d
		p.Agent = &ckpt.Agent{ID: s1, Name: s2}
		p.Progress = &ckpt.ProgressSet{Done: int(n), Total: int(-n)}
	}
	if flags&256 != 0 {
		p.AddLabels, p.RemoveLabels, p.FilesCreated, p.FilesModified = []string{s1}, []string{s2, s1}, []string{}, []string{s2}
		next := []string{s1, s2}
		p.NextSteps = &next
	}
	if flags&512 != 0 {
		p.ReviewScores = map[string]*float64{s1: &f, s2 + "x": nil}
		p.Meta = map[string]json.RawMessage{s1: json.RawMessage(s2), "k": json.RawMessage(`[1,{"a":"<"}]`)}
	}
	if flags&1024 != 0 {
		var none []string
		p.NextSteps = &none
	}
	if flags&2048 != 0 {
		p.Agent = &ckpt.Agent{}
	}
	return p
}

// FuzzPatchJSON: an update event's data is written as json.Marshal writes
// it, and reads back as json.Unmarshal reads it; likewise a step event's.
func FuzzPatchJSON(f *testing.F) {
	f.Add("Writing acceptance criteria 3", "feature_02/spec.md", int64(4), 33.3, uint16(0xffff&^1024))
	f.Add("quote \" <b> & ü \u2028 \\ \t\n\x01 \xff", "", int64(-1), 1e-7, uint16(0xfbff))
	f.Add("", "x", int64(0), 1e21, uint16(0x0700))
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, score float64, flags uint16) {
		p := fuzzPatch(s1, s2, n, score, flags)
		s := ckpt.StepChange{ID: s1, MustExist: flags&1 != 0, Title: s2, Status: ckpt.StepStatus(s1), Phase: s2, By: s1, Output: s2, Notes: s1}
		for _, v := range []any{p, &p, s, &s} {
			want, werr := json.Marshal(v)
			got, gerr := wire.Marshal(v)
			if (werr == nil) != (gerr == nil) || (werr == nil && !bytes.Equal(got, want)) {
				t.Fatalf("%T: wrote %s, %v; json.Marshal writes %s, %v", v, got, gerr, want, werr)
			}
			if werr != nil {
				continue
			}
			var into any = new(ckpt.Patch)
			switch v.(type) {
			case ckpt.StepChange, *ckpt.StepChange:
				into = new(ckpt.StepChange)
			}
			checkDataDecode(t, want, into)
			if !wire.WritesFast(v) {
				t.Fatalf("%T: the generated writer left %s to encoding/json", v, want)
			}
			if utf8.Valid(want) && !wire.ReadsFast(want, reflect.New(reflect.TypeOf(into).Elem()).Interface()) {
				t.Fatalf("%T data %s left to encoding/json", into, want)
			}
		}
	})
}

// FuzzDecodeEventData: whatever the bytes, update and step data decode as
// json.Unmarshal decodes them.
func FuzzDecodeEventData(f *testing.F) {
	p := fuzzPatch("a", "b<", 3, 1.5, 0x3ff)
	b, _ := json.Marshal(p)
	f.Add(b)
	b, _ = json.Marshal(ckpt.StepChange{ID: "research", Status: "done", Notes: "n\"1"})
	f.Add(b)
	f.Add([]byte(`{"title":null,"next_steps":null,"interval":90}`))
	f.Add([]byte(`{"id":"a","ID":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDataDecode(t, data, new(ckpt.Patch))
		checkDataDecode(t, data, new(ckpt.StepChange))
	})
}

func checkDataDecode(t *testing.T, data []byte, into any) {
	t.Helper()
	want := reflect.New(reflect.TypeOf(into).Elem()).Interface()
	werr := json.Unmarshal(data, want)
	gerr := wire.Unmarshal(data, into)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%T: json.Unmarshal error %v, ours %v on %s", into, werr, gerr, data)
	}
	if werr == nil && !reflect.DeepEqual(into, want) {
		t.Fatalf("%T: read %+v; json.Unmarshal reads %+v from %s", into, into, want, data)
	}
}

// TestAPayloadWithSpacesIsCopied: an event's payload as json.Marshal
// wrote it, with spaces and other text in its strings, is copied into the
// event's encoding as it is, not compacted again through encoding/json
// (which allocates, and which every note, step and update with a space in
// its text went through).
func TestAPayloadWithSpacesIsCopied(t *testing.T) {
	e := ckpt.MustEvent(ckpt.EventNote, time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC), ckpt.Actor{Agent: "kai"},
		ckpt.Note{Text: "the tests pass — écrit, and a DEL \x7f too"})
	buf := make([]byte, 0, 4096)
	if allocs := testing.AllocsPerRun(100, func() { buf, _ = wire.Append(buf[:0], &e) }); allocs != 0 {
		t.Errorf("encoding the event allocated %v times, want none (its payload copied)", allocs)
	}
	want, _ := json.Marshal(&e)
	if !bytes.Equal(buf, want) {
		t.Errorf("wire.Append wrote %s, json.Marshal writes %s", buf, want)
	}
}
