package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// node is a JSON value that keeps its object members in file order, so a
// settings file ckpt rewrites keeps the user's layout of keys. Scalars keep
// their JSON text (numbers are not reformatted).
type node struct {
	kind  byte     // '{' object, '[' array, 's' scalar
	keys  []string // object member names, in order (duplicates kept)
	vals  []*node  // object member values
	items []*node  // array items
	raw   []byte   // scalar JSON text
}

// maxDepth bounds nesting when parsing, so a hostile file cannot exhaust
// the stack.
const maxDepth = 1000

func newObject() *node { return &node{kind: '{'} }

func newArray(items ...*node) *node { return &node{kind: '[', items: items} }

func newString(s string) *node {
	return &node{kind: 's', raw: encodeScalar(s)}
}

func newNumber(n int) *node { return &node{kind: 's', raw: []byte(fmt.Sprint(n))} }

// parseDoc parses one JSON value; the error says where the syntax broke, as
// a line and column.
func parseDoc(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = fmt.Errorf("data after the JSON value at byte %d", dec.InputOffset())
		}
	}
	if err != nil {
		// The token decoder's offsets are unreliable; a full decode finds
		// the same error at the right place.
		var v any
		if uerr := json.Unmarshal(data, &v); uerr != nil {
			err = uerr
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("line %d, column %d: %v", line, col, se)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("the JSON ends too early (unclosed object or array)")
		}
		return nil, err
	}
	return n, nil
}

func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col = 1, 1
	for _, b := range data[:off] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func parseValue(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := newObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is not a string")
				}
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, key), append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := newArray()
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, fmt.Errorf("unexpected %q", rune(t))
	case json.Number:
		return &node{kind: 's', raw: []byte(t.String())}, nil
	default: // string, bool, nil
		return &node{kind: 's', raw: encodeScalar(t)}, nil
	}
}

func encodeScalar(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("claude: encoding a JSON scalar: " + err.Error()) // strings, bools and nil always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// get returns the value of the last member named key (the one a JSON reader
// keeps), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.vals[i]
		}
	}
	return nil
}

// set replaces the last member named key, or appends one.
func (n *node) set(key string, v *node) {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			n.vals[i] = v
			return
		}
	}
	n.keys, n.vals = append(n.keys, key), append(n.vals, v)
}

// del removes every member named key.
func (n *node) del(key string) {
	keys, vals := n.keys[:0], n.vals[:0]
	for i, k := range n.keys {
		if k != key {
			keys, vals = append(keys, k), append(vals, n.vals[i])
		}
	}
	n.keys, n.vals = keys, vals
}

// str returns the value of a string scalar, and whether n is one.
func (n *node) str() (string, bool) {
	if n == nil || n.kind != 's' || len(n.raw) == 0 || n.raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(n.raw, &s) != nil {
		return "", false
	}
	return s, true
}

// marshal writes n indented by two spaces, with a trailing newline, the way
// the clients themselves write their settings files.
func (n *node) marshal() []byte {
	var b bytes.Buffer
	n.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *node) write(b *bytes.Buffer, indent int) {
	pad := func(k int) {
		b.WriteByte('\n')
		for range k {
			b.WriteString("  ")
		}
	}
	switch n.kind {
	case '{':
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			pad(indent + 1)
			b.Write(encodeScalar(k))
			b.WriteString(": ")
			n.vals[i].write(b, indent+1)
		}
		pad(indent)
		b.WriteByte('}')
	case '[':
		if len(n.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			pad(indent + 1)
			v.write(b, indent+1)
		}
		pad(indent)
		b.WriteByte(']')
	default:
		b.Write(n.raw)
	}
}
