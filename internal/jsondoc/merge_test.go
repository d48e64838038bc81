package jsondoc

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, `{ "b": [1, 2], "a": 1.0 }`, true},
		{`1`, `1e0`, true},
		{`100`, `1e2`, true},
		{`12345678901234567890123`, `12345678901234567890124`, false}, // equal as float64, not as numbers
		{`12345678901234567890123`, `12345678901234567890123`, true},
		{`1e999999999`, `2`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`null`, `null`, true},
		{`"1"`, `1`, false},
		{`{`, `{`, true}, // not JSON: equal only byte for byte
		{`{`, `{ `, false},
	} {
		if got := Equal(json.RawMessage(tc.a), json.RawMessage(tc.b)); got != tc.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if Equal(nil, json.RawMessage("null")) || !Equal(nil, nil) {
		t.Error("an absent value equals only an absent one")
	}
}

func TestEqualHugeExponentIsQuick(t *testing.T) {
	start := time.Now()
	Equal(json.RawMessage(`1e999999999`), json.RawMessage(`1e999999998`))
	Equal(json.RawMessage(`1`+strings.Repeat("0", 5000)), json.RawMessage(`1e5000`))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("comparing huge numbers took %v: it must not build them", d)
	}
}

func mergeStrings(t *testing.T, base, ours, theirs string) *Object {
	t.Helper()
	return Merge(mustParse(t, base), mustParse(t, ours), mustParse(t, theirs))
}

// TestMergeKeepsTheFileWhereTheStateDidNotChange: a field ckpt did not
// change keeps the file's value and spelling; unknown fields stay, in the
// file's order.
func TestMergeKeepsTheFileWhereTheStateDidNotChange(t *testing.T) {
	base := `{"status":"WAITING","blockers":["x"],"count":1}`
	ours := `{"status":"WAITING","blockers":["x"],"count":2}`
	theirs := `{"gate":{"reason":"paused"},"status":"PAUSED","blockers":"x","count":1.0}`
	got := mergeStrings(t, base, ours, theirs)
	if want := `{"gate":{"reason":"paused"},"status":"PAUSED","blockers":"x","count":2}`; string(got.Raw()) != want {
		t.Errorf("Merge = %s\nwant    %s", got.Raw(), want)
	}
}

func TestMergeChangedObjectsKeyByKey(t *testing.T) {
	base := `{"loop":{"step":"PLAN","fix":0}}`
	ours := `{"loop":{"step":"EXECUTE","fix":0,"new":true}}`
	theirs := `{"loop":{"fix":0,"tool_field":[1],"step":"PLAN"},"extra":1}`
	got := mergeStrings(t, base, ours, theirs)
	if want := `{"loop":{"fix":0,"tool_field":[1],"step":"EXECUTE","new":true},"extra":1}`; string(got.Raw()) != want {
		t.Errorf("Merge = %s\nwant    %s", got.Raw(), want)
	}
}

func TestMergeDropsWhatTheStateDropped(t *testing.T) {
	got := mergeStrings(t, `{"a":1,"b":2}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`)
	if want := `{"a":1,"c":3}`; string(got.Raw()) != want {
		t.Errorf("Merge = %s, want %s", got.Raw(), want)
	}
}

// TestMergeArraysByID: arrays of objects with "id" merge element by element
// in ckpt's order; an element only the file has, and the state never had,
// stays; one the state removed goes.
func TestMergeArraysByID(t *testing.T) {
	base := `{"items":[{"id":"a","status":"pending"},{"id":"b","status":"pending"}]}`
	ours := `{"items":[{"id":"b","status":"complete"},{"id":"c","status":"pending"}]}`
	theirs := `{"items":[{"id":"a","status":"pending"},{"id":"b","status":"pending","note":"kept"},{"id":"z","status":"tool"}]}`
	got := mergeStrings(t, base, ours, theirs)
	want := `{"items":[{"id":"b","status":"complete","note":"kept"},{"id":"c","status":"pending"},{"id":"z","status":"tool"}]}`
	if string(got.Raw()) != want {
		t.Errorf("Merge = %s\nwant    %s", got.Raw(), want)
	}
	// An array that is not all objects with IDs is replaced whole.
	got = mergeStrings(t, `{"l":[1,2]}`, `{"l":[1,3]}`, `{"l":[1,2,9]}`)
	if string(got.Raw()) != `{"l":[1,3]}` {
		t.Errorf("plain array: %s", got.Raw())
	}
}

func TestMergeDoesNotChangeItsArguments(t *testing.T) {
	b, o, th := mustParse(t, `{"a":1}`), mustParse(t, `{"a":2,"n":1}`), mustParse(t, `{"x":0,"a":1}`)
	Merge(b, o, th)
	if string(b.Raw()) != `{"a":1}` || string(o.Raw()) != `{"a":2,"n":1}` || string(th.Raw()) != `{"x":0,"a":1}` {
		t.Errorf("arguments changed: %s %s %s", b.Raw(), o.Raw(), th.Raw())
	}
}

// FuzzMerge: for any three objects, an unchanged state writes the file as it
// is, a file that is the imported one gives the state's rendering, a file
// that already holds the state's rendering stays so (when the rendering's
// arrays of objects repeat no ID, as a rendering of distinct steps does not),
// and the result is always a valid document.
func FuzzMerge(f *testing.F) {
	f.Add(`{"a":1,"b":[1]}`, `{"a":2,"c":{"d":1}}`, `{"x":0,"a":1,"b":"1"}`)
	f.Add(`{"i":[{"id":"a","s":1}]}`, `{"i":[{"id":"b"},{"id":"a","s":2}]}`, `{"i":[{"id":"a","s":1,"k":1},{"id":"z"}]}`)
	f.Add(`{"i":[{"id":"a"},{"id":"a","v":1}]}`, `{"i":[{"id":"a","v":2}]}`, `{"i":[{"id":"a"},{"id":"a"}]}`)
	f.Add(`{}`, `{"n":1.0}`, `{"n":1}`)
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		b, err1 := ParseObject([]byte(base))
		o, err2 := ParseObject([]byte(ours))
		th, err3 := ParseObject([]byte(theirs))
		if err1 != nil || err2 != nil || err3 != nil {
			return
		}
		m := Merge(b, o, th)
		if again, err := ParseObject(m.Indented()); err != nil || !Equal(again.Raw(), m.Raw()) {
			t.Fatalf("merge is not a valid document: %v\n%s", err, m.Raw())
		}
		if got := Merge(b, b, th); !Equal(got.Raw(), th.Raw()) || !slices.Equal(got.Keys(), th.Keys()) {
			t.Fatalf("unchanged state: %s, want the file %s", got.Raw(), th.Raw())
		}
		if got := Merge(th, o, th); !Equal(got.Raw(), o.Raw()) {
			t.Fatalf("file as imported: %s, want the state %s", got.Raw(), o.Raw())
		}
		if got := Merge(b, o, o); distinctIDs(o.Raw()) && !Equal(got.Raw(), o.Raw()) {
			t.Fatalf("file already written: %s, want %s", got.Raw(), o.Raw())
		}
	})
}

// distinctIDs reports whether no array of objects with string IDs in v
// repeats an ID. With a repeated ID, Merge pairs each element with the first
// element of that ID in the other array.
func distinctIDs(v json.RawMessage) bool {
	x, err := decodeAny(v)
	if err != nil {
		return false
	}
	var walk func(any) bool
	walk = func(x any) bool {
		switch t := x.(type) {
		case map[string]any:
			for _, e := range t {
				if !walk(e) {
					return false
				}
			}
		case []any:
			seen := map[string]bool{}
			for _, e := range t {
				if m, ok := e.(map[string]any); ok {
					if id, ok := m["id"].(string); ok {
						if seen[id] {
							return false
						}
						seen[id] = true
					}
				}
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	return walk(x)
}
