package wire_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/wire"
)

// FuzzMembers: what Members accepts is one JSON object whose members are
// exactly those encoding/json reads, with the same values.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"state":{"id":"a","rev":2},"event":{"seq":2,"data":{"text":"x"}},"replayed":true,"warnings":["w"]}`,
		`{"state":null,"event":{"seq":1}}`,
		`{"event":{},"state":{}}`,
		`{"state":{} }`, `{}`, `{"a":1}`, `{"state":"\u00e9"}`, `{"state":[1,{"x":null}]}`, `{"state":1}x`,
	} {
		f.Add([]byte(s))
	}
	keys := []string{"state", "event", "replayed", "warnings"}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, ok := wire.Members(data, keys...)
		if !ok {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("Members accepted %q, which encoding/json refuses: %v", data, err)
		}
		n := 0
		for i, k := range keys {
			w, has := want[k]
			if (raw[i] != nil) != has || has && !bytes.Equal(raw[i], w) {
				t.Fatalf("Members(%q)[%s] = %q, encoding/json reads %q (present %v)", data, k, raw[i], w, has)
			}
			if has {
				n++
			}
		}
		if n != len(want) {
			t.Fatalf("Members(%q) accepted members outside %v: %v", data, keys, want)
		}
	})
}
