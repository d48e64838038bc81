package render

import "testing"

// TestShellArgs: a line a POSIX shell reads back as the same words,
// quoting only the words that need it.
func TestShellArgs(t *testing.T) {
	cases := map[string][]string{
		`step demo/api --title 'Design the schema' '' 'it'\''s' a=b`: {"step", "demo/api", "--title", "Design the schema", "", "it's", "a=b"},
		"claude mcp add ckpt -- ckpt mcp":                            {"claude", "mcp", "add", "ckpt", "--", "ckpt", "mcp"},
		"claude mcp add ckpt -- '/opt/my tools/ckpt' mcp":            {"claude", "mcp", "add", "ckpt", "--", "/opt/my tools/ckpt", "mcp"},
		`x 'it'\''s' '' '$HOME' 'a;b'`:                               {"x", "it's", "", "$HOME", "a;b"},
		"CKPT_STORE=/a/.ckpt user@host:1 a,b+c%d":                    {"CKPT_STORE=/a/.ckpt", "user@host:1", "a,b+c%d"},
	}
	for want, args := range cases {
		if got := ShellArgs(args); got != want {
			t.Errorf("ShellArgs(%q) = %q, want %q", args, got, want)
		}
	}
}
