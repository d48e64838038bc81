package jsondoc

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Notes collects an import's warnings: what was guessed, defaulted or kept
// aside, one line each, in the order met. The zero value is empty and
// ready; it converts to the []string of protocols.Imported.Warnings.
type Notes []string

// Add appends one note, formatted as by fmt.Sprintf.
func (n *Notes) Add(format string, args ...any) { *n = append(*n, fmt.Sprintf(format, args...)) }

// Fields reads the members of one object leniently: a value of another type
// than promised is converted where that is unambiguous, with a note, and
// skipped with a note where it is not. An absent member or a JSON null is
// not read and gets no note. Obj and Notes must be set.
type Fields struct {
	Obj   *Object
	Notes *Notes
	// Path prefixes the member names in notes, e.g. "loop_state.".
	Path string
}

func (f Fields) name(k string) string { return f.Path + k }

// Text returns a string member; a number or a boolean is read as its text.
func (f Fields) Text(k string) (string, bool) {
	v := f.Obj.Get(k)
	if v == nil {
		return "", false
	}
	x, err := decodeAny(v)
	if err != nil {
		return "", false
	}
	switch t := x.(type) {
	case nil:
		return "", false
	case string:
		return t, true
	case json.Number:
		f.Notes.Add("%s is the number %s where text was expected: read as text", f.name(k), t)
		return string(t), true
	case bool:
		f.Notes.Add("%s is %v where text was expected: read as text", f.name(k), t)
		return fmt.Sprint(t), true
	}
	f.Notes.Add("%s is not text: kept as is, not read", f.name(k))
	return "", false
}

// Texts returns a list of strings. A single string is read as a one-item
// list (an empty list when IsNone says it means nothing), items that are not
// strings as their JSON text, null items are skipped.
func (f Fields) Texts(k string) ([]string, bool) {
	v := f.Obj.Get(k)
	if v == nil {
		return nil, false
	}
	x, err := decodeAny(v)
	if err != nil {
		return nil, false
	}
	switch t := x.(type) {
	case nil:
		return nil, false
	case string:
		if IsNone(t) {
			f.Notes.Add("%s is the text %q where a list was promised: read as an empty list", f.name(k), t)
			return []string{}, true
		}
		f.Notes.Add("%s is text where a list was promised: read as a list of one", f.name(k))
		return []string{t}, true
	case []any:
		out := make([]string, 0, len(t))
		for i, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
				continue
			}
			if e == nil {
				f.Notes.Add("%s[%d] is null: skipped", f.name(k), i)
				continue
			}
			f.Notes.Add("%s[%d] is not text: read as its JSON", f.name(k), i)
			out = append(out, string(Encode(e)))
		}
		return out, true
	}
	f.Notes.Add("%s is not a list: kept as is, not read", f.name(k))
	return nil, false
}

// NonEmpty returns the items of list that are not blank, in order, as a new
// slice (empty, not nil, when none is left).
func NonEmpty(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// UniqueNonEmpty returns the items of list that are not blank, each once, in
// the order first met, as a new slice (nil when none is left).
func UniqueNonEmpty(list []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		if strings.TrimSpace(s) != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// IsNone reports whether s says "nothing": "", "none", "n/a", "na", "-",
// "—", "null" or "nil", in any case, with surrounding spaces, dots and
// parentheses ignored ("(None)", "N/A.").
func IsNone(s string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(s), ".()")) {
	case "", "none", "n/a", "na", "-", "—", "null", "nil":
		return true
	}
	return false
}

// Bool returns a boolean member; the text "true"/"yes"/"y" or
// "false"/"no"/"n" (any case) is read with a note.
func (f Fields) Bool(k string) (bool, bool) {
	v := f.Obj.Get(k)
	if v == nil {
		return false, false
	}
	x, err := decodeAny(v)
	if err != nil {
		return false, false
	}
	switch t := x.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "yes", "y":
			f.Notes.Add("%s is the text %q: read as true", f.name(k), t)
			return true, true
		case "false", "no", "n":
			f.Notes.Add("%s is the text %q: read as false", f.name(k), t)
			return false, true
		}
	case nil:
		return false, false
	}
	f.Notes.Add("%s is not true or false: kept as is, not read", f.name(k))
	return false, false
}

// Number returns a finite numeric member; numeric text ("12", "65%") is
// read with a note.
func (f Fields) Number(k string) (float64, bool) {
	v := f.Obj.Get(k)
	if v == nil {
		return 0, false
	}
	x, err := decodeAny(v)
	if err != nil {
		return 0, false
	}
	switch t := x.(type) {
	case json.Number:
		n, err := t.Float64()
		if err == nil && !math.IsInf(n, 0) {
			return n, true
		}
	case string:
		var n float64
		if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimSpace(t), "%"), "%g", &n); err == nil && !math.IsInf(n, 0) && !math.IsNaN(n) {
			f.Notes.Add("%s is the text %q: read as the number %g", f.name(k), t, n)
			return n, true
		}
	case nil:
		return 0, false
	}
	f.Notes.Add("%s is not a number: kept as is, not read", f.name(k))
	return 0, false
}

// Count returns a non-negative whole number member, at most 1e9.
func (f Fields) Count(k string) (int, bool) {
	n, ok := f.Number(k)
	if !ok {
		return 0, false
	}
	if n < 0 || n > 1e9 || n != math.Trunc(n) {
		f.Notes.Add("%s is %g, not a count: kept as is, not read", f.name(k), n)
		return 0, false
	}
	return int(n), true
}

// Status reads a status member by ReadStatus. An absent member, or one that
// is not text, is read as in_progress, with a note.
func (f Fields) Status(k, seed string) ckpt.Status {
	w, ok := f.Text(k)
	if !ok {
		f.Notes.Add("no %s: in_progress assumed", f.name(k))
		return ckpt.StatusInProgress
	}
	return ReadStatus(f.Notes, f.name(k), w, seed)
}

// ReadStatus maps word, the value of field, onto a Status by StatusFromWord
// and, when that had to guess, notes that the word is not one of the
// statuses of seed (e.g. "agent-checkpoints (seed 002)") and what it was read as.
func ReadStatus(n *Notes, field, word, seed string) ckpt.Status {
	s, guessed := StatusFromWord(word)
	if guessed {
		n.Add("%s %q is not a %s status: read as %s", field, word, seed, s)
	}
	return s
}

// Time returns a timestamp member, read by ParseTime, in UTC; what had to be
// assumed is noted, and a value that is not a time is noted and not read.
func (f Fields) Time(k string) (time.Time, bool) {
	s, ok := f.Text(k)
	if !ok {
		return time.Time{}, false
	}
	t, guess, ok := ParseTime(s)
	if !ok {
		f.Notes.Add("%s %q is not a time: kept as is, not read", f.name(k), s)
		return time.Time{}, false
	}
	if guess != "" {
		f.Notes.Add("%s %q has %s", f.name(k), s, guess)
	}
	return t, true
}
