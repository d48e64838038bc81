package ckpt_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

var t0 = time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC)

// chain encodes events as a history, setting seqs and prev sums.
func chain(t *testing.T, events ...ckpt.Event) [][]byte {
	t.Helper()
	var lines [][]byte
	prev := ""
	for i, e := range events {
		e.Seq, e.Prev = int64(i+1), prev
		line, sum, err := ckpt.EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
		prev = sum
	}
	return lines
}

func sampleEvents() []ckpt.Event {
	title := "Schedule fetcher spec"
	return []ckpt.Event{
		ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{Agent: "Secondary-A"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}, Steps: []ckpt.Step{{ID: "research"}, {ID: "spec"}}}),
		ckpt.MustEvent(ckpt.EventStep, t0.Add(time.Minute), ckpt.Actor{}, ckpt.StepChange{ID: "research", Status: ckpt.StepDone, Output: "research/NOTES.md"}),
		ckpt.MustEvent(ckpt.EventDecision, t0.Add(2*time.Minute), ckpt.Actor{}, ckpt.DecisionData{Text: "Use the v2 API <fast> & \"safe\"", Reason: "v1 is rate limited"}),
	}
}

func TestLineRoundTrip(t *testing.T) {
	lines := chain(t, sampleEvents()...)
	var c ckpt.Chain
	for i, line := range lines {
		if !bytes.HasSuffix(line, []byte("\"}\n")) || bytes.Count(line, []byte("\n")) != 1 {
			t.Fatalf("line %d is not one JSON line ending in the sum: %q", i, line)
		}
		if !json.Valid(bytes.TrimSpace(line)) {
			t.Fatalf("line %d is not valid JSON (jq must read histories): %s", i, line)
		}
		e, err := ckpt.DecodeLine(line)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if err := c.Next(e); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		again, _, err := ckpt.EncodeLine(e)
		if err != nil || !bytes.Equal(again, line) {
			t.Fatalf("re-encoding line %d gives\n%s\nwant\n%s", i, again, line)
		}
	}
	if c.Seq != 3 {
		t.Fatalf("chain ends at %d, want 3", c.Seq)
	}
}

func TestLineDamageDetected(t *testing.T) {
	lines := chain(t, sampleEvents()...)
	mid := lines[1]
	cases := map[string][]byte{
		"torn":         mid[:len(mid)/2],
		"flipped byte": flip(mid, 20),
		"edited":       bytes.Replace(mid, []byte("research/NOTES.md"), []byte("research/NOTES.txt"), 1),
		"empty":        {},
		"garbage":      []byte("not json at all\n"),
		"sum removed":  append(bytes.TrimSuffix(bytes.TrimSpace(mid), []byte(`"}`))[:len(mid)-40], '}'),
	}
	for name, line := range cases {
		if _, err := ckpt.DecodeLine(line); !errors.Is(err, ckpt.ErrCorrupt) {
			t.Errorf("%s: DecodeLine error = %v, want ErrCorrupt", name, err)
		}
	}
}

func flip(b []byte, i int) []byte {
	out := bytes.Clone(b)
	out[i] ^= 0x01
	return out
}

func TestChainDetectsMissingAndReorderedLines(t *testing.T) {
	lines := chain(t, sampleEvents()...)
	decode := func(i int) ckpt.Event {
		e, err := ckpt.DecodeLine(lines[i])
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var c ckpt.Chain
	if err := c.Next(decode(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.Next(decode(2)); !errors.Is(err, ckpt.ErrCorrupt) {
		t.Fatalf("skipping a line: %v, want ErrCorrupt", err)
	}
	// A line from another history with the right seq does not chain either.
	other := chain(t, append([]ckpt.Event{ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, nil)}, sampleEvents()[1:]...)...)
	e, err := ckpt.DecodeLine(other[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Next(e); !errors.Is(err, ckpt.ErrCorrupt) {
		t.Fatalf("a foreign line: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeLine(f *testing.F) {
	for _, l := range chain(&testing.T{}, sampleEvents()...) {
		f.Add(l)
	}
	f.Add([]byte(`{"seq":1,"sum":"00000000000000000000000000000000"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ckpt.DecodeLine(line)
		if err != nil {
			if !errors.Is(err, ckpt.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		// Whatever decodes must re-encode to a line that decodes to the same event.
		again, sum, err := ckpt.EncodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		e2, err := ckpt.DecodeLine(again)
		if err != nil || e2.Sum != sum || e2.Seq != e.Seq || e2.Type != e.Type {
			t.Fatalf("re-encoded line does not decode back: %v", err)
		}
	})
}
