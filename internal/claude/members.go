package claude

import (
	"encoding/json"
	"unicode/utf8"
)

// A hook runs on every tool call, so reading its payload must cost little:
// the payload is validated once (json.Valid, no reflection) and its members
// are found by a scan that can rely on that validity, without decoding the
// values ckpt does not use (a Write's whole file content, a tool's
// output).

// member is one name and raw value of a JSON object; the value is a slice
// of the document it was found in.
type member struct {
	name string
	raw  json.RawMessage
}

type members []member

// get returns the value of the last member called name, as decoding into
// a map would.
func (ms members) get(name string) (json.RawMessage, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].name == name {
			return ms[i].raw, true
		}
	}
	return nil, false
}

// objectMembers returns the members of doc in order; ok is false when doc
// is not exactly one valid JSON object (surrounding white space allowed).
func objectMembers(doc []byte) (ms members, ok bool) {
	if !json.Valid(doc) {
		return nil, false
	}
	i := skipSpace(doc, 0)
	if doc[i] != '{' {
		return nil, false
	}
	i++
	// Room for a payload's usual members at once, rather than five
	// allocations growing the slice.
	ms = make(members, 0, 16)
	for {
		i = skipSpace(doc, i)
		switch doc[i] {
		case '}':
			return ms, true
		case ',':
			i++
			continue
		}
		end := valueEnd(doc, i) // the name, a string
		name := memberName(doc[i:end])
		i = skipSpace(doc, end) + 1 // past ':'
		i = skipSpace(doc, i)
		end = valueEnd(doc, i)
		ms = append(ms, member{name: name, raw: doc[i:end:end]})
		i = end
	}
}

// memberName unquotes a valid JSON string as encoding/json does.
func memberName(raw []byte) string {
	if s, ok := plainString(raw); ok {
		return s
	}
	var s string
	json.Unmarshal(raw, &s)
	return s
}

// plainString returns the text of a JSON string that needs no unescaping
// (no '\', no control character, valid UTF-8); ok is false otherwise.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c == '\\' || c == '"' || c < 0x20 {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at doc[i];
// doc must be valid JSON.
func valueEnd(doc []byte, i int) int {
	switch doc[i] {
	case '"':
		for j := i + 1; ; j++ {
			switch doc[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch doc[j] {
			case '"':
				j = valueEnd(doc, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i
	for j < len(doc) {
		switch doc[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
