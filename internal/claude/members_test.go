package claude

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzObjectMembers checks the payload scan against encoding/json: the
// same documents are objects, and every name has the same raw value
// (the last of duplicates) as decoding into a map gives.
func FuzzObjectMembers(f *testing.F) {
	for _, p := range payloads {
		f.Add([]byte(p.json))
	}
	for _, s := range []string{
		`{}`, ` { "a" : [1, {"b":"}"}], "a": "x\"y" } `, `{"k\u0065y":1}`, "{\"\xff\":2}",
		`{"a":-1.5e3,"b":true,"c":null}`, `{"a":1} {"b":2}`, `[1]`, `null`, `"s"`, `{"a":"\\"}`, `{"a":{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var want map[string]json.RawMessage
		wantOK := json.Unmarshal(doc, &want) == nil && want != nil
		got, ok := objectMembers(doc)
		if ok != wantOK {
			t.Fatalf("objectMembers(%q): ok = %v, encoding/json says %v", doc, ok, wantOK)
		}
		if !ok {
			return
		}
		for name, raw := range want {
			g, found := got.get(name)
			if !found || !bytes.Equal(g, raw) {
				t.Fatalf("objectMembers(%q)[%q] = %q, %v; encoding/json gives %q", doc, name, g, found, raw)
			}
		}
		for _, m := range got {
			if _, found := want[m.name]; !found {
				t.Fatalf("objectMembers(%q) found member %q that encoding/json does not", doc, m.name)
			}
		}
	})
}

// TestToolReasonReadsCommandOrDescription: the busy reason a PreToolUse
// records names the tool and what it runs.
func TestToolReasonReadsCommandOrDescription(t *testing.T) {
	for _, tc := range []struct{ input, want string }{
		{`{"command":"go test ./...\nmore","description":"Run"}`, "Bash: go test ./..."},
		{`{"description":"Run the tests"}`, "Bash: Run the tests"},
		{`{"command":"","description":"Run"}`, "Bash: Run"},
		{`{"command":42}`, "Bash: 42"},
		{`"not an object"`, "Bash"},
		{``, "Bash"},
	} {
		in := Input{ToolName: "Bash", ToolInput: json.RawMessage(tc.input)}
		if got := toolReason(in); got != tc.want {
			t.Errorf("toolReason(%s) = %q, want %q", tc.input, got, tc.want)
		}
	}
}
