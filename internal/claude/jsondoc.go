package claude

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ckpt-dev/ckpt/internal/jsondoc"
)

// node is a settings file's JSON as a tree ckpt edits: object members in
// file order, so a settings file ckpt rewrites keeps the user's layout of
// keys, and scalars as their JSON text as read (numbers and escapes are
// not reformatted). Reading and writing are internal/jsondoc's, the one
// ordered-JSON implementation of the module; a repeated key keeps its
// first place and its last value, as every JSON reader does.
type node struct {
	kind  byte     // '{' object, '[' array, 's' scalar
	keys  []string // object member names, in order
	vals  []*node  // object member values
	items []*node  // array items
	raw   []byte   // scalar JSON text
}

// maxDepth bounds how deeply a settings file may nest: the shared parser's
// bound, so a file ckpt can read is one it can also cut.
const maxDepth = jsondoc.MaxDepth

func newObject() *node { return &node{kind: '{'} }

func newArray(items ...*node) *node { return &node{kind: '[', items: items} }

func newString(s string) *node { return &node{kind: 's', raw: jsondoc.Encode(s)} }

func newNumber(n int) *node { return &node{kind: 's', raw: []byte(fmt.Sprint(n))} }

// parseDoc parses one JSON value; the error says where the syntax broke, as
// a line and column.
func parseDoc(data []byte) (*node, error) {
	raw, err := jsondoc.ParseValue(data)
	if err != nil {
		return nil, err
	}
	return toNode(raw)
}

// toNode builds the tree of a valid JSON value.
func toNode(raw json.RawMessage) (*node, error) {
	switch raw[0] {
	case '{':
		o, err := jsondoc.ParseObject(raw)
		if err != nil {
			return nil, err
		}
		n := newObject()
		for _, k := range o.Keys() {
			v, err := toNode(o.Get(k))
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
		}
		return n, nil
	case '[':
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		n := newArray()
		for _, it := range items {
			v, err := toNode(bytes.TrimSpace(it))
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		return n, nil
	}
	return &node{kind: 's', raw: raw}, nil
}

// get returns the value of the member named key, or nil.
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

// set replaces the member named key, or appends one.
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
	return jsondoc.Indent(n.compact())
}

// compact is n as compact JSON.
func (n *node) compact() json.RawMessage {
	switch n.kind {
	case '{':
		o := jsondoc.NewObject()
		for i, k := range n.keys {
			o.Set(k, n.vals[i].compact())
		}
		return o.Raw()
	case '[':
		var b bytes.Buffer
		b.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(v.compact())
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	return n.raw
}
