package testsupport

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
)

// FailForward asserts what every hook call guarantees its client
// (docs/hooks.md): stdout empty or one JSON object under Claude Code's
// 10,000-character limit, and at most one line on stderr.
func FailForward(t testing.TB, out, errOut string) {
	t.Helper()
	if out != "" {
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("stdout is not one JSON object: %v: %q", err, out)
		}
		if n := len(utf16.Encode([]rune(out))); n >= 10000 {
			t.Fatalf("stdout is %d characters, over Claude Code's limit", n)
		}
	}
	if strings.Count(errOut, "\n") > 1 || errOut != "" && !strings.HasSuffix(errOut, "\n") {
		t.Fatalf("stderr is not one line: %q", errOut)
	}
}
