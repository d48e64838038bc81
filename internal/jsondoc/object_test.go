package jsondoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustParse(t testing.TB, s string) *Object {
	t.Helper()
	o, err := ParseObject([]byte(s))
	if err != nil {
		t.Fatalf("ParseObject(%s): %v", s, err)
	}
	return o
}

func TestParseObjectKeepsOrderAndSpelling(t *testing.T) {
	o := mustParse(t, `{"z": 1.0, "a": "x", "m": {"b": 1e2, "a": [1, 2]}, "z2": null}`)
	if got := o.Keys(); !slices.Equal(got, []string{"z", "a", "m", "z2"}) {
		t.Errorf("keys %v", got)
	}
	if string(o.Get("z")) != "1.0" || string(o.Get("m")) != `{"b": 1e2, "a": [1, 2]}` {
		t.Errorf("values not kept as read: z=%s m=%s", o.Get("z"), o.Get("m"))
	}
	if !o.Has("z2") || o.Get("z2") == nil || o.Has("absent") || o.Get("absent") != nil {
		t.Errorf("Has/Get: null member must be present, absent one nil")
	}
	if got := string(o.Raw()); got != `{"z":1.0,"a":"x","m":{"b":1e2,"a":[1,2]},"z2":null}` {
		t.Errorf("Raw = %s", got)
	}
}

func TestParseObjectRepeatedKeyKeepsFirstPlaceLastValue(t *testing.T) {
	o := mustParse(t, `{"a": 1, "b": 2, "a": 3}`)
	if !slices.Equal(o.Keys(), []string{"a", "b"}) || string(o.Get("a")) != "3" {
		t.Errorf("keys %v, a=%s", o.Keys(), o.Get("a"))
	}
	var m map[string]any
	json.Unmarshal([]byte(`{"a": 1, "b": 2, "a": 3}`), &m)
	if m["a"] != float64(3) {
		t.Fatalf("encoding/json keeps %v", m["a"]) // the rule ParseObject follows
	}
}

func TestParseObjectErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[1]`, "not a JSON object"},
		{`"text"`, "not a JSON object"},
		{``, "ends early"},
		{`{"a": 1`, "ends early"},
		{`{"a": }`, "invalid JSON at line 1, column 7 (byte 6)"},
		{"{\n  \"a\": 1,\n  \"b\": x\n}", "invalid JSON at line 3, column 8"},
		{`{"a": 1} {}`, "data after the JSON object"},
		{`{"a": 1} x`, "data after the JSON object"},
		{strings.Repeat("[", MaxDepth+1), "nested more than"},
	} {
		_, err := ParseObject([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseObject(%.40q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
	if _, err := ParseObject([]byte(`[]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("array: %v, want ErrNotObject", err)
	}
}

func TestParseObjectDepthLimit(t *testing.T) {
	nest := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	if _, err := ParseObject([]byte(nest(MaxDepth))); err != nil {
		t.Errorf("%d levels: %v", MaxDepth, err)
	}
	if _, err := ParseObject([]byte(nest(MaxDepth + 1))); err == nil {
		t.Errorf("%d levels accepted", MaxDepth+1)
	}
	// Brackets inside strings, escaped quotes included, do not nest.
	deepText := `{"a": "` + strings.Repeat(`[{\"`, 200) + `"}`
	if _, err := ParseObject([]byte(deepText)); err != nil {
		t.Errorf("brackets in a string counted as nesting: %v", err)
	}
}

func TestObjectEditing(t *testing.T) {
	o := NewObject()
	o.Put("b", 1)
	o.Put("a", []string{"x"})
	o.Set("c", json.RawMessage(`{"k":true}`))
	o.Put("b", "changed") // keeps its place
	o.Delete("a")
	o.Delete("absent")
	if got := string(o.Raw()); got != `{"b":"changed","c":{"k":true}}` || o.Len() != 2 {
		t.Errorf("Raw = %s, Len = %d", got, o.Len())
	}
	keys := o.Keys()
	keys[0] = "mutated"
	if o.Keys()[0] != "b" {
		t.Error("Keys shares its slice with the object")
	}
	o.Put("a", nil)
	if got := string(o.Raw()); got != `{"b":"changed","c":{"k":true},"a":null}` {
		t.Errorf("after re-adding: %s", got)
	}
}

func TestIndentedIsAFile(t *testing.T) {
	o := mustParse(t, `{"a":[1,{"b":"<&>"}],"c":{}}`)
	want := "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"<&>\"\n    }\n  ],\n  \"c\": {}\n}\n"
	if got := string(o.Indented()); got != want {
		t.Errorf("Indented:\n%s\nwant:\n%s", got, want)
	}
}

func TestEncodeDoesNotEscapeHTML(t *testing.T) {
	if got := string(Encode("a < b && c > d")); got != `"a < b && c > d"` {
		t.Errorf("Encode = %s", got)
	}
	if got := string(Encode(map[string]int{"b": 2, "a": 1})); got != `{"a":1,"b":2}` {
		t.Errorf("Encode map = %s", got)
	}
}

func TestAsObject(t *testing.T) {
	for _, in := range []string{"", "null", "[]", `"x"`, "{"} {
		if _, ok := AsObject(json.RawMessage(in)); ok {
			t.Errorf("AsObject(%q) ok", in)
		}
	}
	if o, ok := AsObject(json.RawMessage(`{"a":1}`)); !ok || string(o.Get("a")) != "1" {
		t.Errorf("AsObject of an object: %v %v", o, ok)
	}
}

// FuzzParseObject: ParseObject accepts exactly the valid JSON objects
// nested at most MaxDepth deep, and what it gives writes back as the same
// value with the same keys in the same order.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"b":[1,2,{"c":null}],"a":2}`, `{"x":"\u003c\"]}"}`, `{"n":-0.0e+1,"big":123456789012345678901234567890}`,
		`[1]`, `{"a":`, `{"a":1}x`, ` {"k" : "v"} `, strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseObject(data)
		trimmed := bytes.TrimSpace(data)
		isObject := json.Valid(data) && len(trimmed) > 0 && trimmed[0] == '{' && checkDepth(data) == nil
		if (err == nil) != isObject {
			t.Fatalf("ParseObject error %v, but valid object within depth: %v", err, isObject)
		}
		if err != nil {
			return
		}
		var in, out any
		if err := json.Unmarshal(data, &in); err != nil {
			return // numbers beyond float64: encoding/json cannot compare
		}
		raw := o.Raw()
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("Raw is not JSON: %v\n%s", err, raw)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("Raw changed the value:\n%s\n%s", data, raw)
		}
		again, err := ParseObject(o.Indented())
		if err != nil || !slices.Equal(again.Keys(), o.Keys()) || !Equal(again.Raw(), raw) {
			t.Fatalf("Indented does not read back the same: %v", err)
		}
	})
}
