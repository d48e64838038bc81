package render

import (
	"slices"
	"testing"
)

// FuzzDataKeys holds dataKeys' scan of plain event data (plainKeys) to the
// json.Decoder's reading (decodedKeys) for any bytes: the same keys in the
// same order, or, where it does not scan, the decoder's answer.
func FuzzDataKeys(f *testing.F) {
	for _, s := range []string{
		`{"stage":"S2.P2","current_step":"Writing acceptance criteria 3","files_modified":["feature_02/spec.md"]}`,
		`{"id":"research","status":"done","notes":"pass {1}, [2] \"q\""}`,
		` { "a" : { "b" : [1, {"c": 2}] } , "d" : null } `,
		`{}`, `[]`, `[{"a":1}]`, `"s"`, `1`, `null`, ``, `{"a":1} {"b":2}`, `{"a":1,}`, `{"a":}`,
		`{"\u00e9":1,"b\"c":2}`, "{\"\xff\":1}", `{"é":1}`, `{"a":"\\"}`, `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := decodedKeys(data)
		if keys, ok := plainKeys(data); ok && !slices.Equal(keys, want) {
			t.Fatalf("plainKeys(%q) = %q; the decoder reads %q", data, keys, want)
		}
		if got := dataKeys(data); !slices.Equal(got, want) {
			t.Fatalf("dataKeys(%q) = %q; the decoder reads %q", data, got, want)
		}
	})
}

// TestPlainKeysScansWhatCkptWrites: the event data ckpt writes takes the
// scan, not the decoder.
func TestPlainKeysScansWhatCkptWrites(t *testing.T) {
	data := []byte(`{"stage":"S2.P2","current_step":"Writing {acceptance} [criteria], \"3\"","files_modified":["a.md","b.md"],"meta":{"k":{"x":[1,2]}}}`)
	keys, ok := plainKeys(data)
	if !ok || !slices.Equal(keys, []string{"stage", "current_step", "files_modified", "meta"}) {
		t.Fatalf("plainKeys = %q, %v", keys, ok)
	}
}
