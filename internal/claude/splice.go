package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Uninstalling cuts ckpt's entries out of the settings file's own bytes, so
// that everything else keeps its formatting (indentation, spacing, key
// order, escapes) byte for byte: a user's file is not reformatted because
// ckpt was removed from it. The cut is checked against the JSON that merge
// computes; when the two disagree (duplicate keys, say) the file is
// written as merge has it instead.

// span is where one JSON value lies in the file: data[start:end]. For an
// object member, keyStart is where its name starts.
type span struct {
	start, end int
	keyStart   int     // where a member's name starts; start for an item
	key        string  // the member name, for an object's members
	kids       []*span // an object's members or an array's items, in order
	kind       byte    // '{', '[' or 's'
}

// cut is a byte range to remove.
type cut struct{ from, to int }

// uninstallBytes returns data with ckpt's hook entries removed (see
// merge): the groups left empty, the event lists left empty and a "hooks"
// object left empty go too. want is what merge made of the document; the
// result must parse to the same JSON, or ok is false.
func uninstallBytes(data []byte, want []byte, command string) (out []byte, ok bool) {
	sc := &scanner{data: data}
	root, err := sc.document()
	if err != nil || root.kind != '{' {
		return nil, false
	}
	cuts := hookCuts(data, root, command)
	out = applyCuts(data, cuts)
	doc, err := parseDoc(bytes.TrimPrefix(out, []byte("\ufeff")))
	if err != nil || string(doc.marshal()) != string(want) {
		return nil, false
	}
	return out, true
}

// hookCuts lists what to remove from the last "hooks" member of root,
// mirroring merge's removal.
func hookCuts(data []byte, root *span, command string) []cut {
	hooksAt := -1
	for i, m := range root.kids {
		if m.key == "hooks" {
			hooksAt = i
		}
	}
	if hooksAt < 0 || root.kids[hooksAt].kind != '{' {
		return nil
	}
	hooks := root.kids[hooksAt]
	var cuts []cut
	var goneEvents []int
	for ei, event := range hooks.kids {
		if event.kind != '[' {
			continue
		}
		var goneGroups []int
		stripped := false
		for gi, g := range event.kids {
			entries := memberOf(g, "hooks")
			if g.kind != '{' || entries == nil || entries.kind != '[' {
				continue
			}
			var ours []int
			for hi, h := range entries.kids {
				if isOurEntry(data[h.start:h.end], command) {
					ours = append(ours, hi)
				}
			}
			switch {
			case len(ours) == 0:
			case len(ours) < len(entries.kids):
				cuts = append(cuts, removeKids(entries, ours)...)
				stripped = true
			default:
				goneGroups = append(goneGroups, gi)
				stripped = true
			}
		}
		if stripped && len(goneGroups) == len(event.kids) {
			goneEvents = append(goneEvents, ei)
			continue
		}
		cuts = append(cuts, removeKids(event, goneGroups)...)
	}
	if len(goneEvents) > 0 && len(goneEvents) == len(hooks.kids) {
		return append(cuts[:0], removeKids(root, []int{hooksAt})...)
	}
	return append(cuts, removeKids(hooks, goneEvents)...)
}

// memberOf returns the last member named key of object s.
func memberOf(s *span, key string) *span {
	var found *span
	for _, m := range s.kids {
		if m.key == key {
			found = m
		}
	}
	return found
}

// isOurEntry reports whether a hook entry's JSON is one of ckpt's, as
// merge's ours does.
func isOurEntry(raw []byte, command string) bool {
	var h map[string]json.RawMessage
	if json.Unmarshal(raw, &h) != nil {
		return false
	}
	var typ, cmd string
	if t, ok := h["type"]; ok && (json.Unmarshal(t, &typ) != nil || typ != "command") {
		return false
	}
	c, ok := h["command"]
	return ok && json.Unmarshal(c, &cmd) == nil && IsCkptCommand(cmd, command)
}

// removeKids returns the cuts that remove the children at the indexes gone
// (ascending) from container c with the commas between them: a run that
// follows a kept child goes from that child's end; a run at the start goes
// up to the next kept child's start; all of them leave an empty container.
func removeKids(c *span, gone []int) []cut {
	if len(gone) == 0 {
		return nil
	}
	if len(gone) == len(c.kids) {
		return []cut{{c.start + 1, c.end - 1}}
	}
	var cuts []cut
	for i := 0; i < len(gone); {
		j := i
		for j+1 < len(gone) && gone[j+1] == gone[j]+1 {
			j++
		}
		first, last := gone[i], gone[j]
		if first > 0 {
			cuts = append(cuts, cut{c.kids[first-1].end, c.kids[last].end})
		} else {
			cuts = append(cuts, cut{c.kids[first].from(), c.kids[last+1].from()})
		}
		i = j + 1
	}
	return cuts
}

// from is where a child starts: its name for a member.
func (s *span) from() int { return s.keyStart }

// applyCuts removes the ranges from data. Ranges inside a removed range
// are dropped with it.
func applyCuts(data []byte, cuts []cut) []byte {
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].from < cuts[j].from })
	var out []byte
	at := 0
	for _, c := range cuts {
		if c.from < at {
			at = max(at, c.to)
			continue
		}
		out = append(out, data[at:c.from]...)
		at = c.to
	}
	return append(out, data[at:]...)
}

// scanner records where each JSON value of a document lies.
type scanner struct {
	data  []byte
	pos   int
	depth int
}

var errSyntax = errors.New("not JSON")

func (s *scanner) document() (*span, error) {
	s.space()
	if len(s.data) >= 3 && string(s.data[:3]) == "\ufeff" {
		s.pos += 3
		s.space()
	}
	v, err := s.value()
	if err != nil {
		return nil, err
	}
	s.space()
	if s.pos != len(s.data) {
		return nil, fmt.Errorf("%w: data after the value", errSyntax)
	}
	return v, nil
}

func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value() (*span, error) {
	if s.pos >= len(s.data) {
		return nil, errSyntax
	}
	switch c := s.data[s.pos]; c {
	case '{', '[':
		return s.container(c)
	case '"':
		start := s.pos
		if err := s.str(); err != nil {
			return nil, err
		}
		return &span{start: start, end: s.pos, kind: 's'}, nil
	}
	start := s.pos
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			goto done
		}
		s.pos++
	}
done:
	if !json.Valid(s.data[start:s.pos]) {
		return nil, errSyntax
	}
	return &span{start: start, end: s.pos, kind: 's'}, nil
}

// str moves past a string, escapes included.
func (s *scanner) str() error {
	s.pos++ // the opening quote
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			s.pos += 2
		case '"':
			s.pos++
			return nil
		default:
			s.pos++
		}
	}
	return errSyntax
}

func (s *scanner) container(open byte) (*span, error) {
	if s.depth++; s.depth > maxDepth {
		return nil, errSyntax
	}
	defer func() { s.depth-- }()
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	c := &span{start: s.pos, kind: open}
	s.pos++
	s.space()
	if s.pos < len(s.data) && s.data[s.pos] == closer {
		s.pos++
		c.end = s.pos
		return c, nil
	}
	for {
		s.space()
		keyStart, key := -1, ""
		if open == '{' {
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return nil, errSyntax
			}
			keyStart = s.pos
			if err := s.str(); err != nil {
				return nil, err
			}
			if json.Unmarshal(s.data[keyStart:s.pos], &key) != nil {
				return nil, errSyntax
			}
			s.space()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return nil, errSyntax
			}
			s.pos++
			s.space()
		}
		v, err := s.value()
		if err != nil {
			return nil, err
		}
		v.keyStart = v.start
		if open == '{' {
			v.key, v.keyStart = key, keyStart
		}
		c.kids = append(c.kids, v)
		s.space()
		if s.pos >= len(s.data) {
			return nil, errSyntax
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case closer:
			s.pos++
			c.end = s.pos
			return c, nil
		default:
			return nil, errSyntax
		}
	}
}
