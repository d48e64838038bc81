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
// error that gives the byte offset for JSON that is not valid, that ends
// early, that nests deeper than MaxDepth or that has data after the object.
func ParseObject(data []byte) (*Object, error) {
	if err := checkDepth(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, ErrNotObject
	}
	o := NewObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntax(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key %v is not a string", tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, jsonSyntax(err)
		}
		o.Set(key, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
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

func jsonSyntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("invalid JSON: the file ends early")
	}
	return fmt.Errorf("invalid JSON: %v", err)
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
func (o *Object) Indented() []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, o.Raw(), "", "  "); err != nil {
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
