package claude

import (
	"testing"
)

// FuzzUninstallBytes: whatever the settings file holds, cutting ckpt's
// entries out of its text never panics, and a cut it accepts is exactly
// the JSON the merge computes (uninstallBytes checks that itself; here it
// is checked again from outside).
func FuzzUninstallBytes(f *testing.F) {
	for _, s := range []string{
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "ckpt hook Stop"}]}]}}`,
		"{\n    \"hooks\": {\"Stop\": [{\"hooks\": [{\"command\": \"./x\"}, {\"command\": \"ckpt hook Stop\"}]}], \"A\": []},\n\t\"m\": 1\n}",
		`{"hooks": {"Stop": [{"hooks": [{"command": "ckpt hook Stop"}]}], "Stop": [{"hooks": [{"command": "ckpt hook Stop"}]}]}}`,
		`{"a": "\"", "hooks": {"S": [{"hooks": [{"type": "prompt", "command": "ckpt hook S"}]}, 3, {"hooks": 1}]}, "hooks": {}}`,
		"\ufeff{\"hooks\":{\"E\":[{\"matcher\":\"x\",\"hooks\":[{\"command\":\"'/a b/ckpt' hook E\"}]}]}}",
		`{"hooks": {"Stop": [{"hooks": [{"command": "ckpt hook Stop"}]}]`,
		`[1, 2`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseDoc(data)
		if err != nil || doc.kind != '{' {
			uninstallBytes(data, nil, "") // must not panic either
			return
		}
		if merge(doc, Claude, "", false) != nil {
			return
		}
		want := doc.marshal()
		out, ok := uninstallBytes(data, want, "")
		if !ok {
			return
		}
		got, err := parseDoc(out)
		if err != nil || string(got.marshal()) != string(want) {
			t.Fatalf("cut %q from %q: %v, want %s", out, data, err, want)
		}
	})
}
