package claude

import (
	"encoding/json"
	"testing"
)

// FuzzParseDoc: a settings file either fails to parse with an error or
// is read into a tree whose file form is valid JSON and is written again
// byte for byte (a rewrite is stable).
func FuzzParseDoc(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"ckpt hook PreToolUse"}]}]}}`,
		`{"a":1,"b":[true,null,"\u00e9"],"a":2}`, `[1,{"x":{}}]`, `{"a":`, "\ufeff{}", `{"a":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseDoc(data)
		if err != nil {
			return
		}
		out := n.marshal()
		if !json.Valid(data) {
			t.Fatalf("parseDoc accepted %q, which is not JSON", data)
		}
		if !json.Valid(out) {
			t.Fatalf("marshal of %q is not JSON:\n%s", data, out)
		}
		again, err := parseDoc(out)
		if err != nil {
			t.Fatalf("re-parsing %s: %v", out, err)
		}
		if string(again.marshal()) != string(out) {
			t.Fatalf("a rewrite of %q is not stable:\n%s\nthen\n%s", data, out, again.marshal())
		}
	})
}
