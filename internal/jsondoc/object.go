package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Object is a JSON object that remembers the order of its keys. Values are
// kept as the raw bytes read, so a value written back is the value read.
// Use NewObject, ParseObject or AsObject; the zero Object is not usable.
type Object struct {
	keys []string
	vals map[string]json.RawMessage
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]json.RawMessage{}} }

// ErrNotObject is returned by ParseObject for valid JSON that is not an
// object (an array, a string, a number…).
var ErrNotObject = errors.New("not a JSON object")

// MaxDepth bounds how deeply a document may nest: the seed documents nest
// four levels; a file nested hundreds deep is not one, and would make an
// indented export grow with the square of its depth.
const MaxDepth = 64

// ParseObject reads one JSON object. A repeated key keeps its first position
// and its last value, as encoding/json does. Numbers keep their spelling.
//
// It fails with ErrNotObject for JSON that is not an object, and with an
// error that gives the line, column and byte offset for JSON that is not
// valid, that ends early, that nests deeper than MaxDepth or that has data
// after the object.
func ParseObject(data []byte) (*Object, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntax(data, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if err := validValue(data); err != nil {
			return nil, err
		}
		return nil, ErrNotObject
	}
	o := NewObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntax(data, err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonSyntax(data, err)
		}
		o.Set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonSyntax(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// ParseValue checks that data is one JSON value (of any kind), nested no
// deeper than MaxDepth, and returns it without the white space around it;
// the error is ParseObject's.
func ParseValue(data []byte) (json.RawMessage, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	if err := validValue(data); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(data), nil
}

// validValue says where data stops being one JSON value.
func validValue(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return nil
	}
	return jsonSyntax(data, err)
}

func checkDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("JSON nested more than %d levels deep: not a seed checkpoint file", MaxDepth)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// jsonSyntax says what is wrong with data, where: the line and column (for
// a person with an editor) and the byte offset.
func jsonSyntax(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// A token decoder's offsets can be off; a whole decode finds the
		// same error at the right place.
		var v any
		var whole *json.SyntaxError
		if errors.As(json.Unmarshal(data, &v), &whole) {
			se = whole
		}
		// Offset counts the bytes read, the offending one included.
		at := max(se.Offset-1, 0)
		line, col := position(data, at)
		return fmt.Errorf("invalid JSON at line %d, column %d (byte %d): %v", line, col, at, se)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: the file ends early (an unclosed object, array or string)")
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// position is the line and column (both from 1) of the byte at offset off.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
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

// AsObject parses v when it is a JSON object; ok is false for an absent
// (empty) value and for anything that is not an object.
func AsObject(v json.RawMessage) (o *Object, ok bool) {
	if len(v) == 0 {
		return nil, false
	}
	o, err := ParseObject(v)
	return o, err == nil
}

// Keys returns the object's keys in order, as a new slice.
func (o *Object) Keys() []string { return slices.Clone(o.keys) }

// Len returns the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Get returns the value of k as read or set, nil when k is absent.
func (o *Object) Get(k string) json.RawMessage { return o.vals[k] }

// Has reports whether k is present (with any value, null included).
func (o *Object) Has(k string) bool { _, ok := o.vals[k]; return ok }

// Set sets k to v, which must be one valid JSON value. A new key goes last;
// an existing key keeps its place.
func (o *Object) Set(k string, v json.RawMessage) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Put sets k to the JSON encoding of v (see Encode).
func (o *Object) Put(k string, v any) { o.Set(k, Encode(v)) }

// Delete removes k; removing an absent key does nothing.
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	for i, x := range o.keys {
		if x == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Raw returns o as compact JSON, keys in order.
func (o *Object) Raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(Encode(k))
		b.WriteByte(':')
		if err := json.Compact(&b, o.vals[k]); err != nil {
			b.Write(o.vals[k]) // values come from a decoder or Encode: valid
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Indented returns o as the bytes of a file: two-space indentation and a
// final newline. It panics if a value given to Set was not valid JSON.
func (o *Object) Indented() []byte { return Indent(o.Raw()) }

// Indent returns the valid JSON value v as the bytes of a file: two-space
// indentation, empty objects and arrays as {} and [], and a final newline.
// It panics if v is not valid JSON.
func Indent(v json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, v, "", "  "); err != nil {
		panic(fmt.Sprintf("indenting JSON built from valid values: %v", err))
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// Encode returns the JSON encoding of v without HTML escaping (seed files
// are not HTML) and without a final newline. It panics for a value
// encoding/json cannot encode (a channel, a function, a NaN): callers encode
// plain values.
func Encode(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("encoding %T: %v", v, err))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
