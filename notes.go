package ckpt

import (
	"strings"
	"unicode/utf8"
)

// MaxNotesBytes bounds a state's Context.Notes. Each note event adds a
// line to the notes (applyNote), and a checkpoint lives for days: without
// a bound the state, and with it every later append, read, answer and
// state row, grew with the checkpoint's age. The state keeps the newest
// notes that fit; every note stays in the history (ckpt log).
const MaxNotesBytes = 8 << 10

// BoundNotes returns the part of notes a state keeps: the longest tail of
// whole lines (a line starts at the beginning or after a newline) that is
// at most MaxNotesBytes long. When the last line alone is longer, it keeps
// that line's first MaxNotesBytes bytes (cut at a character boundary).
//
// Bounding after every note gives the state that bounding once at the end
// gives (BoundNotes of the notes joined as applyNote joins them), for notes
// whose lines fit the bound and that do not end in a newline: so a state
// folded before the bound existed, once its notes are bounded, is the fold
// with it, which check relies on (FuzzBoundNotes). Notes within the bound
// are returned unchanged.
func BoundNotes(notes string) string { return boundNotes(notes, MaxNotesBytes) }

// boundNotes is BoundNotes with the bound max (> 0), for the tests.
func boundNotes(notes string, max int) string {
	if len(notes) <= max {
		return notes
	}
	last := notes[strings.LastIndexByte(notes, '\n')+1:]
	if len(last) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(last[cut]) {
			cut--
		}
		return last[:cut]
	}
	tail := notes[len(notes)-max:]
	if notes[len(notes)-max-1] == '\n' {
		return tail // the tail starts a line
	}
	return tail[strings.IndexByte(tail, '\n')+1:]
}
