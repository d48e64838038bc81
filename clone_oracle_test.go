package ckpt_test

import (
	"reflect"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// This file keeps the reflective deep copy that Checkpoint.Clone was
// before it was generated: the tests hold the generated code equal to it,
// and BenchmarkClone measures one against the other.

var timeType = reflect.TypeFor[time.Time]()

// reflectClone is the deep copy by a walk of the type: every slice, map
// and pointer copied, nil ones left nil, time.Time copied as a value.
func reflectClone(c *ckpt.Checkpoint) *ckpt.Checkpoint {
	if c == nil {
		return nil
	}
	out := new(ckpt.Checkpoint)
	copyValue(reflect.ValueOf(out).Elem(), reflect.ValueOf(c).Elem())
	return out
}

func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		n := reflect.New(src.Type().Elem())
		copyValue(n.Elem(), src.Elem())
		dst.Set(n)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		n := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		if flat(src.Type().Elem()) {
			reflect.Copy(n, src)
		} else {
			for i := range src.Len() {
				copyValue(n.Index(i), src.Index(i))
			}
		}
		dst.Set(n)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(src.Type(), src.Len())
		for it := src.MapRange(); it.Next(); {
			v := reflect.New(src.Type().Elem()).Elem()
			copyValue(v, it.Value())
			n.SetMapIndex(it.Key(), v)
		}
		dst.Set(n)
	case reflect.Struct:
		if src.Type() == timeType {
			dst.Set(src) // a value: its *Location is shared and immutable
			return
		}
		for i := range src.NumField() {
			copyValue(dst.Field(i), src.Field(i))
		}
	default:
		dst.Set(src)
	}
}

// flat reports whether values of t hold no reference, so a slice of them
// can be copied with one copy.
func flat(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return false
	case reflect.String:
		return true // strings are immutable
	case reflect.Array:
		return flat(t.Elem())
	case reflect.Struct:
		if t == timeType {
			return true
		}
		for i := range t.NumField() {
			if !flat(t.Field(i).Type) {
				return false
			}
		}
	}
	return true
}
