package ckpt

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzBoundNotes holds boundNotes to its contract, with small bounds so
// that short inputs reach them: at most max bytes; the input itself when
// it fits; else a tail of whole lines, or the head of a last line longer
// than max; valid UTF-8 stays valid; bounding again changes nothing; and
// bounding after each added note equals bounding once at the end (what
// lets check accept a state folded before the bound existed; exact for
// notes whose lines fit the bound and that do not end in a newline).
func FuzzBoundNotes(f *testing.F) {
	f.Add("first note\nsecond", "third", uint8(12))
	f.Add("", "x", uint8(1))
	f.Add("a\n\nb", "é long line of notes", uint8(7))
	f.Add("ünïcödé\nz", "日本語のノート", uint8(5))
	f.Add("a\nb\n", "", uint8(2))
	f.Fuzz(func(t *testing.T, s, note string, m uint8) {
		max := int(m)%64 + 1
		got := boundNotes(s, max)
		switch {
		case len(got) > max:
			t.Fatalf("boundNotes(%q, %d) = %q: %d bytes", s, max, got, len(got))
		case len(s) <= max && got != s:
			t.Fatalf("boundNotes(%q, %d) = %q: changed notes within the bound", s, max, got)
		case len(s) > max && !strings.HasSuffix(s, got) && !strings.HasPrefix(s[strings.LastIndexByte(s, '\n')+1:], got):
			t.Fatalf("boundNotes(%q, %d) = %q: neither a tail nor the last line's head", s, max, got)
		case utf8.ValidString(s) && !utf8.ValidString(got):
			t.Fatalf("boundNotes(%q, %d) = %q: not valid UTF-8", s, max, got)
		case boundNotes(got, max) != got:
			t.Fatalf("boundNotes(%q, %d) = %q, which bounds again to %q", s, max, got, boundNotes(got, max))
		}
		lastFits := len(s)-strings.LastIndexByte(s, '\n')-1 <= max
		if lastFits && len(got) < len(s) && (!strings.HasSuffix(s, got) || s[len(s)-len(got)-1] != '\n') {
			t.Fatalf("boundNotes(%q, %d) = %q: a tail that does not start a line", s, max, got)
		}
		// A note added as applyNote adds it (after a newline unless the
		// notes are empty), for notes whose lines fit and that do not end
		// in a newline: the notes agents write.
		if s == "" || note == "" || strings.HasSuffix(s, "\n") || strings.HasSuffix(note, "\n") || longestLine(s+"\n"+note) > max {
			return
		}
		add := func(notes string) string {
			if notes == "" {
				return note
			}
			return notes + "\n" + note
		}
		if each, once := boundNotes(add(boundNotes(s, max)), max), boundNotes(add(s), max); each != once {
			t.Fatalf("notes %q then %q, bound %d: bounded at each step %q, once %q", s, note, max, each, once)
		}
	})
}

func longestLine(s string) int {
	n := 0
	for line := range strings.SplitSeq(s, "\n") {
		n = max(n, len(line))
	}
	return n
}

// TestNotesKeepTheNewestWithinTheBound: a checkpoint that takes a thousand
// notes keeps the newest whole notes that fit in MaxNotesBytes, the last
// one among them, and its history keeps every note.
func TestNotesKeepTheNewestWithinTheBound(t *testing.T) {
	at := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	title := "notes"
	events := []Event{MustEvent(EventCreated, at, Actor{Agent: "kai"}, Created{Patch: Patch{Title: &title}})}
	for i := range 1000 {
		events = append(events, MustEvent(EventNote, at, Actor{Agent: "kai"}, Note{Text: fmt.Sprintf("note %04d: what the agent saw and did next", i)}))
	}
	for i := range events {
		events[i].Seq = int64(i + 1)
	}
	c, err := Fold("kai/notes", events)
	if err != nil {
		t.Fatal(err)
	}
	notes := c.Context.Notes
	if len(notes) > MaxNotesBytes || len(notes) < MaxNotesBytes-100 {
		t.Fatalf("notes hold %d bytes after 1,000 notes, want at most %d and close to it", len(notes), MaxNotesBytes)
	}
	if !strings.HasPrefix(notes, "note ") || !strings.HasSuffix(notes, "note 0999: what the agent saw and did next") {
		t.Fatalf("notes do not run from a whole note to the newest: %.40q ... %.60q", notes, notes[len(notes)-60:])
	}
	// A patch that sets the notes is bounded the same way.
	long := strings.Repeat("x", MaxNotesBytes) + "\nthe newest line"
	set := MustEvent(EventUpdate, at, Actor{Agent: "kai"}, Patch{Notes: &long})
	set.Seq = c.Rev + 1
	if c, err = Apply("kai/notes", c, set); err != nil {
		t.Fatal(err)
	}
	if c.Context.Notes != "the newest line" {
		t.Fatalf("notes set to %d bytes keep %.40q, want the newest line", len(long), c.Context.Notes)
	}
}
