package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// fuzzCheckpoint builds a checkpoint that uses every field, from a few
// fuzzed values; flags switch optional parts on.
func fuzzCheckpoint(s1, s2 string, n int64, f float64, sec, nsec int64, offset int, flags uint16) *ckpt.Checkpoint {
	at := time.Unix(sec, nsec).In(time.FixedZone("z", offset))
	later := at.Add(time.Hour)
	c := &ckpt.Checkpoint{ID: s1, Rev: n, Agent: ckpt.Agent{ID: s2}, Status: ckpt.Status(s2),
		Progress: ckpt.Progress{Done: int(n), Total: int(-n), Percent: f}, Resume: ckpt.Resume{Resumable: flags&1 != 0},
		Cycles: ckpt.Cycles{Count: int(n)}, StartedAt: at, UpdatedAt: later}
	if flags&2 != 0 {
		c.Parent, c.Labels, c.Title, c.TaskID, c.Stage, c.Phase, c.CurrentStep, c.StatusReason = s2, []string{s1, s2}, s1, s2, s1, s2, s1, s2
		c.Agent = ckpt.Agent{ID: s1, Type: s2, Name: s1}
		c.Session = ckpt.Session{ID: s2, Number: int(n), StartedAt: at}
	}
	if flags&4 != 0 {
		c.Steps = []ckpt.Step{{ID: s1, Status: ckpt.StepStatus(s2)},
			{ID: s2, Title: s1, Status: "done", Phase: s2, StartedAt: &at, CompletedAt: &later, By: s1, Output: s2, Notes: s1}}
		c.Acceptance = []ckpt.Criterion{{ID: s1, Title: s2, Met: true, VerifiedAt: &at}, {ID: s2}}
	}
	if flags&8 != 0 {
		c.Decisions = []ckpt.Decision{{At: at, Text: s1, Reason: s2}, {At: later, Text: s2}}
		c.Blockers = []ckpt.Blocker{{ID: s1, Text: s2, Since: at, ClearedAt: &later}, {ID: s2, Text: s1, Since: at}}
		c.Errors = []ckpt.ErrorItem{{At: at, Type: s1, Message: s2, Blocking: true, ClearedAt: &at}, {At: later, Message: s1}}
	}
	if flags&16 != 0 {
		c.Files = ckpt.Files{Created: []string{s1}, Modified: []string{s2, s1}}
		c.Context = ckpt.Context{LastProcessed: s1, NextToProcess: s2, Notes: s1}
		c.Resume.Instructions, c.Resume.NextSteps = s2, []string{s1}
		c.Cycles.Max = int(n)
	}
	if flags&32 != 0 {
		c.ReviewScores = map[string]*float64{s1: &f, s2 + "x": nil}
	}
	if flags&64 != 0 {
		c.Meta = map[string]json.RawMessage{s1: json.RawMessage(s2), "null": nil, "n": json.RawMessage(`{"a":[1,-2.5e3,true,null,"s\n"]}`)}
	}
	if flags&128 != 0 {
		c.Heartbeat = ckpt.Heartbeat{LastBeat: at, Interval: ckpt.Duration(nsec)}
	}
	if flags&256 != 0 {
		c.Heartbeat.Presence = &ckpt.Presence{State: ckpt.PresenceState(s1), Since: at, Reason: s2,
			Process: &ckpt.Process{Host: s1, PID: int(n), Start: s2}}
	}
	if flags&512 != 0 {
		c.Code = &ckpt.CodeState{Root: s1, Host: s2, Branch: s1, Head: s2, Upstream: s1, Ahead: int(n), Behind: 1,
			Uncommitted: int(n), Untracked: 2, At: at}
		c.ResumesWithoutProgress = int(n)
		c.Archived = &ckpt.Archive{Reason: s1, At: at, From: s2}
		c.CompletedAt = &later
	}
	if flags&1024 != 0 {
		c.Messages = []ckpt.Message{{ID: s1, From: s2, At: at, Text: s1}, {ID: s2, At: later}}
	}
	return c
}

// FuzzCheckpointJSON: Append writes exactly what json.Marshal writes for
// a checkpoint, and Unmarshal reads that back exactly as json.Unmarshal
// does.
func FuzzCheckpointJSON(f *testing.F) {
	f.Add("kai-7/secondary-a", "Schedule fetcher spec", int64(4), 33.3, int64(1768487400), int64(123456789), 0, uint16(0xffff))
	f.Add("a", "quote \" <b> & ü \u2028 \\ \t\n\x01 \xff", int64(0), 1e-7, int64(-62135596800), int64(0), 3600, uint16(0xfeff))
	f.Add("x", "tab\there", int64(-1), 1e21, int64(253402300800), int64(1), -1800, uint16(0x2f6))
	f.Add("", "", int64(1<<62), math.Copysign(0, -1), int64(0), int64(999999999), 59, uint16(0))
	f.Add("1", "[1,2]", int64(7), 100.0, int64(1), int64(2), 0, uint16(0x40))
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, pct float64, sec, nsec int64, offset int, flags uint16) {
		c := fuzzCheckpoint(s1, s2, n, pct, sec, nsec, offset, flags)
		want, werr := json.Marshal(c)
		got, gerr := wire.Append([]byte("prefix"), c)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json.Marshal error %v, wire.Append error %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("wire.Append wrote\n%s\njson.Marshal writes\n%s", got[6:], want)
		}
		checkDecode(t, want)
		if utf8.Valid(want) && !wire.ReadsFast(want, new(ckpt.Checkpoint)) {
			t.Fatalf("the generated reader left json.Marshal's own output to encoding/json:\n%s", want)
		}
	})
}

// FuzzDecodeCheckpointJSON: whatever the bytes, Unmarshal into a
// checkpoint returns what json.Unmarshal returns.
func FuzzDecodeCheckpointJSON(f *testing.F) {
	for _, flags := range []uint16{0, 0xfeff, 0x2f6} {
		b, _ := json.Marshal(fuzzCheckpoint("kai-7/a", "ü \" <", 3, 12.5, 1768487400, 5, 0, flags))
		f.Add(b)
	}
	f.Add([]byte(`{"id":"a","rev":1,"ID":"b"}`))
	f.Add([]byte(`{"rev":1,"id":"a"}`))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"id":"\ud83d\ude00","labels":null,"progress":{"percent":1e400}}`))
	f.Add([]byte(`{"review_scores":{"a":null,"b":-0.5E+2},"meta":{"x":{"y":[]}}} `))
	f.Add([]byte(`{"heartbeat":{"interval":"15m0s"},"started_at":"2026-01-15T14:30:00+01:00"}`))
	f.Fuzz(checkDecode)
}

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	var want, got ckpt.Checkpoint
	werr := json.Unmarshal(data, &want)
	gerr := wire.Unmarshal(data, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("json.Unmarshal error %v, wire.Unmarshal error %v on\n%s", werr, gerr, data)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("wire.Unmarshal read\n%#v\njson.Unmarshal reads\n%#v\nfrom %s", got, want, data)
	}
	// Into a pointer (a keeper's answer decodes into &res.State): what
	// json.Unmarshal leaves in a nil *ckpt.Checkpoint.
	var wantPtr, gotPtr *ckpt.Checkpoint
	werr = json.Unmarshal(data, &wantPtr)
	gerr = wire.Unmarshal(data, &gotPtr)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("into a pointer: json.Unmarshal error %v, wire.Unmarshal error %v on\n%s", werr, gerr, data)
	}
	if werr == nil && !reflect.DeepEqual(gotPtr, wantPtr) {
		t.Fatalf("into a pointer: wire.Unmarshal read\n%#v\njson.Unmarshal reads\n%#v\nfrom %s", gotPtr, wantPtr, data)
	}
}

// TestUnmarshalIntoAPointerIsFast: a state decoded into a pointer field
// (the keeper client's &res.State, a **ckpt.Checkpoint) is read by the
// generated code, not encoding/json, and null leaves the pointer nil.
func TestUnmarshalIntoAPointerIsFast(t *testing.T) {
	data, err := json.Marshal(fuzzCheckpoint("kai-7/a", "Writing the spec", 3, 12.5, 1768487400, 5, 0, 0x6bf))
	if err != nil {
		t.Fatal(err)
	}
	var want ckpt.Checkpoint
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got := &ckpt.Checkpoint{ID: "left over"}
	n := wire.Fallbacks(func() {
		if err := wire.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("decoding into a **ckpt.Checkpoint fell back to encoding/json %d times", n)
	}
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("read %#v, want %#v", got, want)
	}
	if err := wire.Unmarshal([]byte("null"), &got); err != nil || got != nil {
		t.Errorf("null read into a pointer: %#v, %v; want nil, no error", got, err)
	}
}

// BenchmarkCheckpointJSON compares the codec with encoding/json on a
// state as ckpt update leaves it (warm: encoding/json's first-use cost,
// what a process pays once, is not in these figures).
func BenchmarkCheckpointJSON(b *testing.B) {
	c := fuzzCheckpoint("kai-7/secondary-a", "Writing acceptance criteria", 4, 33.3, 1768487400, 5, 0, 0x1f)
	data, _ := json.Marshal(c)
	var buf []byte
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			buf, _ = wire.Append(buf[:0], c)
		}
	})
	b.Run("json-marshal", func(b *testing.B) {
		for b.Loop() {
			buf, _ = json.Marshal(c)
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			var c ckpt.Checkpoint
			if err := wire.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-unmarshal", func(b *testing.B) {
		for b.Loop() {
			var c ckpt.Checkpoint
			json.Unmarshal(data, &c)
		}
	})
}

// BenchmarkNotesJSON encodes and decodes the state of a long-lived
// checkpoint: 8 KiB of notes (ckpt.MaxNotesBytes), as lines of about 100
// bytes (a hook's session notes) and as short lines ("step 12": a loop's
// notes), what every append of such a checkpoint writes and every read
// decodes. Its floor is copying the same bytes (copy): the string's
// escapes and checks are what the codec adds.
func BenchmarkNotesJSON(b *testing.B) {
	for _, notes := range []struct {
		name string
		line func(i int) string
	}{
		{"lines100", func(i int) string {
			return fmt.Sprintf("2026-11-28T01:%02d:00Z session s1: edited internal/wire/writer.go, ran go test ./internal/wire (%d)", i%60, i)
		}},
		{"lines8", func(i int) string { return fmt.Sprintf("step %d", i) }},
	} {
		c := fuzzCheckpoint("kai-7/secondary-a", "Writing acceptance criteria", 4, 33.3, 1768487400, 5, 0, 0x1f)
		var text []string
		for n, i := 0, 0; n < ckpt.MaxNotesBytes-120; i++ {
			text = append(text, notes.line(i))
			n += len(text[i]) + 1
		}
		c.Context.Notes = strings.Join(text, "\n")
		data, _ := json.Marshal(c)
		var buf []byte
		b.Run(notes.name+"/append", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				buf, _ = wire.Append(buf[:0], c)
			}
		})
		b.Run(notes.name+"/copy", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				buf = append(buf[:0], data...)
			}
		})
		b.Run(notes.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var c ckpt.Checkpoint
				if err := wire.Unmarshal(data, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzSummaryJSON: Append writes exactly what json.Marshal writes, for the
// summary of any checkpoint.
func FuzzSummaryJSON(f *testing.F) {
	f.Add("kai-7/secondary-a", "Schedule fetcher spec", int64(4), 33.3, int64(1768487400), int64(123456789), 0, uint16(0xffff))
	f.Add("a", "quote \" <b> & ü \u2028 \\ \t\n\x01 \xff", int64(0), 1e-7, int64(-62135596800), int64(0), 3600, uint16(0xfeff))
	f.Add("x", "tab\there", int64(-1), 1e21, int64(253402300800), int64(1), -1800, uint16(0x2f6))
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, pct float64, sec, nsec int64, offset int, flags uint16) {
		s := fuzzCheckpoint(s1, s2, n, pct, sec, nsec, offset, flags).Summary()
		want, werr := json.Marshal(&s)
		got, gerr := wire.Append([]byte("prefix"), &s)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json.Marshal error %v, wire.Append error %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("wire.Append wrote\n%s\njson.Marshal writes\n%s", got[6:], want)
		}
	})
}

// FuzzDecodeSummaryJSON: whatever the bytes, Unmarshal into a summary
// returns what json.Unmarshal returns; data nil stands for the summary of
// a fuzzed checkpoint as a store's index keeps it.
func FuzzDecodeSummaryJSON(f *testing.F) {
	f.Add("kai-7/secondary-a", "Schedule fetcher spec", int64(4), 33.3, int64(1768487400), int64(123456789), 0, uint16(0xffff), []byte(nil))
	f.Add("a", "quote \" <b> & ü \\", int64(0), 1e-7, int64(-62135596800), int64(0), 3600, uint16(0xfeff), []byte(nil))
	for _, b := range []string{`{"id":"a","rev":1e3,"progress":{"percent":-0.5e-3}}`, `{"id":"a","rev":01}`, `{"id":"a","ID":"b"}`,
		`{"archived":{"reason":"x"},"archived":{"from":"y"}}`, `{"id":"a","labels":[],"heartbeat":{"interval":"1h"}}`,
		`{"heartbeat":{"last_beat":"2026-01-15T14:30:00Z","presence":{"state":"busy"}}}`} {
		f.Add("", "", int64(0), 0.0, int64(0), int64(0), 0, uint16(0), []byte(b))
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, n int64, pct float64, sec, nsec int64, offset int, flags uint16, data []byte) {
		if data == nil {
			s := fuzzCheckpoint(s1, s2, n, pct, sec, nsec, offset, flags).Summary()
			s.Heartbeat.Presence = nil
			var err error
			if data, err = wire.Marshal(&s); err != nil {
				return
			}
			if utf8.Valid([]byte(s1+s2)) && !wire.ReadsFast(data, new(ckpt.Summary)) {
				t.Fatalf("a summary as the index keeps it is left to encoding/json:\n%s", data)
			}
		}
		var want, got ckpt.Summary
		werr := json.Unmarshal(data, &want)
		gerr := wire.Unmarshal(data, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("json.Unmarshal error %v, wire.Unmarshal error %v on\n%s", werr, gerr, data)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("wire.Unmarshal read\n%#v\njson.Unmarshal reads\n%#v\nfrom %s", got, want, data)
		}
	})
}

// BenchmarkDecodeSummaryJSON compares Unmarshal with encoding/json
// on one summary as a store's index keeps it.
func BenchmarkDecodeSummaryJSON(b *testing.B) {
	s := fuzzCheckpoint("agent-07/task-000123", "Schedule fetcher spec", 4, 33.3, 1768487400, 0, 0, 0x1f).Summary()
	s.Heartbeat.Presence = nil
	line, _ := json.Marshal(&s)
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			s = ckpt.Summary{}
			if err := wire.Unmarshal(line, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json-unmarshal", func(b *testing.B) {
		for b.Loop() {
			var s ckpt.Summary
			if err := json.Unmarshal(line, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzEventJSON: Marshal writes json.Marshal's bytes for an event, and
// Compact is json.Marshal of a json.RawMessage.
func FuzzEventJSON(f *testing.F) {
	f.Add(int64(3), int64(1768487400), int64(5), 0, "update", "kai", "s1", "k", `{"current_step":"x","files_modified":["f.md"]}`, "9fc29e3872bc615683990b097d81033e")
	f.Add(int64(0), int64(-62135596800), int64(0), 3600, "a<b>", "", "\xff", "\"", "{ \"a\" : [1, 2] }", "")
	f.Add(int64(-1), int64(253402300800), int64(1), -30, "", "", "", "", `"<&>"`, "p")
	f.Add(int64(1), int64(1), int64(1), 0, "note", "a", "", "", `{"text":"ü"}`, "")
	f.Add(int64(2), int64(1), int64(1), 0, "note", "a", "", "", `{"text":"a note, with spaces — and\u2028 a\u2029 line"}`, "")
	f.Add(int64(2), int64(1), int64(1), 0, "note", "a", "", "", "{\"text\":\"raw \u2028 and \u2029 and \x7f\"}", "")
	f.Add(int64(2), int64(1), int64(1), 0, "note", "a", "", "", `{"text": "space after the colon"}`, "")
	f.Add(int64(2), int64(1), int64(1), 0, "note", "a", "", "", "{\"text\":\"bad \xe2\x80 utf-8\"}", "")
	f.Fuzz(func(t *testing.T, seq, sec, nsec int64, offset int, typ, agent, session, key, data, prev string) {
		e := ckpt.Event{Seq: seq, At: time.Unix(sec, nsec).In(time.FixedZone("z", offset)), Type: ckpt.EventType(typ),
			Actor: ckpt.Actor{Agent: agent, Session: session}, Key: key, Prev: prev}
		if data != "" {
			e.Data = json.RawMessage(data)
		}
		want, werr := json.Marshal(e)
		got, gerr := wire.Append([]byte("prefix"), &e)
		if (werr == nil) != (gerr == nil) || (werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...))) {
			t.Fatalf("wire.Append wrote\n%s (%v)\njson.Marshal writes\n%s (%v)", got, gerr, want, werr)
		}
		if werr == nil {
			var back, wantBack ckpt.Event
			if err := json.Unmarshal(want, &wantBack); err != nil {
				t.Fatal(err)
			}
			if err := wire.Unmarshal(want, &back); err != nil || !reflect.DeepEqual(back, wantBack) {
				t.Fatalf("wire.Unmarshal read %#v, %v; json.Unmarshal reads %#v", back, err, wantBack)
			}
		}
		raw := json.RawMessage(data)
		if data == "" && seq%2 == 0 {
			raw = nil
		}
		want, werr = json.Marshal(raw)
		got, gerr = wire.Compact(raw)
		if (werr == nil) != (gerr == nil) || (werr == nil && !bytes.Equal(got, want)) {
			t.Fatalf("Compact(%q) = %s, %v; json.Marshal writes %s, %v", data, got, gerr, want, werr)
		}
	})
}
