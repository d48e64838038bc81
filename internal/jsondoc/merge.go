package jsondoc

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
)

// Equal reports whether a and b hold the same JSON value: key order,
// spacing and number spelling (1 or 1.0) do not matter. A nil value is an
// absent one and equals only another absent one. Values that are not valid
// JSON are equal only when their bytes are.
func Equal(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, erra := decodeAny(a)
	vb, errb := decodeAny(b)
	if erra != nil || errb != nil {
		return bytes.Equal(a, b)
	}
	return sameValue(va, vb)
}

func decodeAny(v json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	err := dec.Decode(&x)
	return x, err
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		return ok && sameNumber(x, y)
	default:
		return a == b
	}
}

// sameNumber compares two JSON numbers by value: whole numbers exactly
// (up to 400 digits), others as float64. It never builds a huge number from
// an exponent such as 1e999999999.
func sameNumber(x, y json.Number) bool {
	if x == y {
		return true
	}
	if wholeNumber(x) && wholeNumber(y) {
		bx, okx := new(big.Int).SetString(string(x), 10)
		by, oky := new(big.Int).SetString(string(y), 10)
		return okx && oky && bx.Cmp(by) == 0
	}
	fx, errx := strconv.ParseFloat(string(x), 64)
	fy, erry := strconv.ParseFloat(string(y), 64)
	return errx == nil && erry == nil && fx == fy
}

func wholeNumber(n json.Number) bool {
	s := strings.TrimPrefix(string(n), "-")
	return len(s) > 0 && len(s) <= 400 && strings.Trim(s, "0123456789") == ""
}

// Merge returns the file to write: theirs changed by the edits that turn
// base into ours. base is the adapter's rendering of the checkpoint as it
// was imported, ours its rendering of the checkpoint now, theirs the file
// (as imported, or as it is on disk now).
//
// Where the checkpoint did not change a field (ours equals base), the
// file's value and spelling win, so fields ckpt does not model and values
// ckpt would spell differently ("PAUSED", "N/A (paused)", a string where an
// array was promised) survive. Where it changed one, ours wins, merged key
// by key inside objects and by "id" inside arrays of objects, so unknown
// fields nested in a changed object survive too; a field ours dropped is
// dropped. Keys keep theirs' order, with ours' new keys after. An element
// whose ID repeats within an array is paired with the first element of that
// ID in the other arrays.
//
// Merge does not change its arguments. It returns a new object, empty only
// when the merge gives no object at all.
func Merge(base, ours, theirs *Object) *Object {
	merged, _ := AsObject(merge3(base.Raw(), ours.Raw(), theirs.Raw()))
	if merged == nil {
		return NewObject()
	}
	return merged
}

// merge3 returns the value to write for one field (see Merge); nil means
// the field is absent.
func merge3(base, ours, theirs json.RawMessage) json.RawMessage {
	if Equal(base, ours) {
		return theirs
	}
	if ours == nil {
		return nil
	}
	if oo, ok := AsObject(ours); ok {
		if ot, ok := AsObject(theirs); ok {
			ob, ok := AsObject(base)
			if !ok {
				ob = NewObject()
			}
			out := NewObject()
			for _, k := range ot.keys {
				if v := merge3(ob.Get(k), oo.Get(k), ot.Get(k)); v != nil {
					out.Set(k, v)
				}
			}
			for _, k := range oo.keys {
				if !ot.Has(k) {
					if v := merge3(ob.Get(k), oo.Get(k), nil); v != nil {
						out.Set(k, v)
					}
				}
			}
			return out.Raw()
		}
	}
	if merged, ok := mergeByID(base, ours, theirs); ok {
		return merged
	}
	return ours
}

// mergeByID merges arrays whose elements are all objects with a string "id"
// (sitebuilder's (seed 003) subtask items): element by element, in ours' order, then the
// elements only theirs has and base never had.
func mergeByID(base, ours, theirs json.RawMessage) (json.RawMessage, bool) {
	oo, ok := idArray(ours)
	if !ok {
		return nil, false
	}
	ot, ok := idArray(theirs)
	if !ok {
		return nil, false
	}
	ob, _ := idArray(base)
	find := func(list []idElem, id string) json.RawMessage {
		for _, e := range list {
			if e.id == id {
				return e.raw
			}
		}
		return nil
	}
	var out []json.RawMessage
	for _, e := range oo {
		if t := find(ot, e.id); t != nil {
			out = append(out, merge3(find(ob, e.id), e.raw, t))
		} else {
			out = append(out, e.raw)
		}
	}
	for _, e := range ot {
		if find(oo, e.id) == nil && find(ob, e.id) == nil {
			out = append(out, e.raw)
		}
	}
	if out == nil {
		out = []json.RawMessage{}
	}
	return Encode(out), true
}

type idElem struct {
	id  string
	raw json.RawMessage
}

func idArray(v json.RawMessage) ([]idElem, bool) {
	var list []json.RawMessage
	if len(v) == 0 || json.Unmarshal(v, &list) != nil || list == nil {
		return nil, false
	}
	out := make([]idElem, 0, len(list))
	for _, e := range list {
		o, ok := AsObject(e)
		if !ok {
			return nil, false
		}
		var id string
		if json.Unmarshal(o.Get("id"), &id) != nil || id == "" {
			return nil, false
		}
		out = append(out, idElem{id, e})
	}
	return out, true
}
