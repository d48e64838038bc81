package wire_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// TestEveryFieldRoundTrips: every exported field of the wire's root types
// (wire.Roots), at any depth (found by reflection, so a field added later
// is covered without a change here), is written by the generated code
// exactly as json.Marshal writes it and read back by it exactly as
// json.Unmarshal reads it: alone (the other fields zero, which exercises
// its omitempty/omitzero rule), and with every field set. A field of a
// kind this test cannot fill fails it, naming the field.
func TestEveryFieldRoundTrips(t *testing.T) {
	for _, v := range wire.Roots() {
		typ := reflect.TypeOf(v)
		t.Run(typ.Name(), func(t *testing.T) {
			all := reflect.New(typ).Elem()
			fillAll(t, all, typ.Name(), 0)
			checkRoundTrip(t, typ.Name()+" with every field set", all)
			paths := fieldPaths(t, typ, nil, typ.Name(), 0)
			if len(paths) == 0 {
				t.Fatalf("%s has no exported field", typ)
			}
			for _, p := range paths {
				one := reflect.New(typ).Elem()
				f := reach(t, one, p.index)
				fillAll(t, f, p.name, 1)
				checkRoundTrip(t, p.name+" alone", one)
				// Its zero value alone too: omitempty and omitzero decide it.
				zero := reflect.New(typ).Elem()
				reach(t, zero, p.index)
				checkRoundTrip(t, p.name+" zero", zero)
			}
		})
	}
}

// checkRoundTrip holds the codec to encoding/json on v: the same bytes
// written, and those bytes read back to the same value; the codec's bytes
// read back by the codec write the same bytes again, so no field is lost.
func checkRoundTrip(t *testing.T, what string, v reflect.Value) {
	t.Helper()
	ptr := v.Addr().Interface()
	want, werr := json.Marshal(ptr)
	got, gerr := wire.Marshal(ptr)
	if werr != nil || gerr != nil {
		t.Fatalf("%s: json.Marshal error %v, wire.Marshal error %v", what, werr, gerr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: wire.Marshal wrote\n%s\njson.Marshal writes\n%s\n(a field added or retagged? go generate ./internal/wire)", what, got, want)
	}
	if !wire.WritesFast(ptr) {
		t.Fatalf("%s: left to encoding/json by the generated writer", what)
	}
	if !wire.ReadsFast(want, reflect.New(v.Type()).Interface()) {
		t.Fatalf("%s: json.Marshal's bytes are left to encoding/json by the generated reader:\n%s", what, want)
	}
	wantBack := reflect.New(v.Type())
	gotBack := reflect.New(v.Type())
	if err := json.Unmarshal(want, wantBack.Interface()); err != nil {
		t.Fatalf("%s: json.Unmarshal of json.Marshal's bytes: %v\n%s", what, err, want)
	}
	if err := wire.Unmarshal(want, gotBack.Interface()); err != nil {
		t.Fatalf("%s: wire.Unmarshal of json.Marshal's bytes: %v\n%s", what, err, want)
	}
	if !reflect.DeepEqual(gotBack.Interface(), wantBack.Interface()) {
		t.Fatalf("%s: wire.Unmarshal read\n%#v\njson.Unmarshal reads\n%#v\nfrom %s", what, gotBack.Interface(), wantBack.Interface(), want)
	}
	again, err := wire.Marshal(gotBack.Interface())
	if err != nil || !bytes.Equal(again, want) {
		t.Fatalf("%s: read back and written again it is\n%s (%v)\nnot\n%s", what, again, err, want)
	}
}

// fieldPath is one exported field, as the index path reflect.Value.Field
// follows from the top type (through pointers, and through the element of
// slices and maps: -1).
type fieldPath struct {
	name  string
	index []int
}

const elem = -1

// fieldPaths lists the exported fields of struct type typ and, depth
// first, of the structs they hold. Types with their own JSON methods
// (time.Time, ckpt.Duration) are leaves.
func fieldPaths(t *testing.T, typ reflect.Type, prefix []int, name string, depth int) []fieldPath {
	if depth > 8 {
		t.Fatalf("%s: nesting deeper than 8 (a recursive type?): teach fieldPaths to stop", name)
	}
	var out []fieldPath
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		idx := append(append([]int(nil), prefix...), i)
		fname := name + "." + f.Name
		out = append(out, fieldPath{fname, idx})
		for inner, p := innerStruct(f.Type, idx); inner != nil; inner = nil {
			out = append(out, fieldPaths(t, inner, p, fname, depth+1)...)
		}
	}
	return out
}

// innerStruct returns the struct type a field of type ft holds (itself,
// or behind pointers, slices and maps) with the path to it, or nil when it
// holds none or the struct has its own JSON methods.
func innerStruct(ft reflect.Type, idx []int) (reflect.Type, []int) {
	for {
		switch ft.Kind() {
		case reflect.Pointer:
			ft = ft.Elem()
		case reflect.Slice, reflect.Map:
			ft, idx = ft.Elem(), append(idx, elem)
		case reflect.Struct:
			if hasJSONMethods(ft) {
				return nil, nil
			}
			return ft, idx
		default:
			return nil, nil
		}
	}
}

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func hasJSONMethods(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Implements(marshalerType) || p.Implements(marshalerType) || p.Implements(unmarshalerType)
}

// reach returns the field at path in v, allocating the pointers and the
// one slice element or map entry on the way (so it exists, zero).
func reach(t *testing.T, v reflect.Value, path []int) reflect.Value {
	for _, i := range path {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		switch {
		case i != elem:
			v = v.Field(i)
		case v.Kind() == reflect.Slice:
			if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			v = v.Index(0)
		default:
			t.Fatalf("a map of structs (%s): teach reach to set one entry", v.Type())
		}
	}
	return v
}

// fillAll sets v, and everything it holds, to values that are not zero and
// that JSON has to escape or format with care.
func fillAll(t *testing.T, v reflect.Value, name string, n int) {
	t.Helper()
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		at := time.Date(2026, 1, 15, 14, 30, n, 123456789, time.FixedZone("", 3600+60*n))
		v.Set(reflect.ValueOf(at))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(fmt.Sprintf(` { "a" : [ %d, -2.5e3, true, null, "<\u2028&>" ] } `, n))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s <&> \u2028 \"ü\" \t %d", name, n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(90_000_000_000 + n)) // a duration of 1m30s, or a count
		if v.Int() != int64(90_000_000_000+n) {
			v.SetInt(int64(7 + n))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(7 + n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(33.333333333333336 + float64(n))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(t, v.Elem(), name, n)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fillAll(t, s.Index(0), name+"[0]", n)
		fillAll(t, s.Index(1), name+"[1]", n+1)
		v.Set(s)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			t.Fatalf("%s: map key of kind %s: teach fillAll to make one", name, v.Type().Key().Kind())
		}
		m := reflect.MakeMap(v.Type())
		for i, k := range []string{"b<", "a", ""} {
			e := reflect.New(v.Type().Elem()).Elem()
			fillAll(t, e, name+"["+k+"]", n+i)
			m.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillAll(t, v.Field(i), name+"."+v.Type().Field(i).Name, n)
			}
		}
	default:
		t.Fatalf("%s: a field of kind %s: teach fillAll to fill it, so the codec is checked on it", name, v.Kind())
	}
}

// TestUnmarshalKeepsNoReferenceToData: what Unmarshal returns shares no
// memory with its input (filestore decodes summaries straight from the
// mapped index, which is unmapped after the listing).
func TestUnmarshalKeepsNoReferenceToData(t *testing.T) {
	for _, v := range []any{ckpt.Checkpoint{}, ckpt.Summary{}, ckpt.Event{}} {
		all := reflect.New(reflect.TypeOf(v)).Elem()
		fillAll(t, all, "x", 0)
		data, err := wire.Marshal(all.Addr().Interface())
		if err != nil {
			t.Fatal(err)
		}
		want := reflect.New(all.Type())
		if err := json.Unmarshal(data, want.Interface()); err != nil {
			t.Fatal(err)
		}
		got := reflect.New(all.Type())
		if err := wire.Unmarshal(data, got.Interface()); err != nil {
			t.Fatal(err)
		}
		for i := range data {
			data[i] = '#'
		}
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Fatalf("%T changed when its input was overwritten:\n%#v", v, got.Interface())
		}
	}
}
