package render

import "testing"

func TestShellArgs(t *testing.T) {
	got := ShellArgs([]string{"step", "demo/api", "--title", "Design the schema", "", "it's", "a=b"})
	if want := `step demo/api --title 'Design the schema' '' 'it'\''s' a=b`; got != want {
		t.Errorf("ShellArgs = %s, want %s", got, want)
	}
}
