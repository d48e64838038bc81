package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTerminalShowsControlsInsteadOfObeyingThem(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain title, naïve café 日本\n\tindented", "plain title, naïve café 日本\n\tindented"},
		{"red \x1b[31malert\x1b[0m", `red \x1b[31malert\x1b[0m`},
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`},
		{"over\rwrite", `over\x0dwrite`},
		{"bell\a back\b del\x7f nul\x00", `bell\x07 back\x08 del\x7f nul\x00`},
		{"c1 csi \u009b31m and nel \u0085", `c1 csi \u009b31m and nel \u0085`},
		{"raw 8-bit csi \x9b31m", "raw 8-bit csi \uFFFD31m"},
		{"bidi \u202egnp.exe\u202c", `bidi \u202egnp.exe\u202c`},
		{"line\u2028sep", `line\u2028sep`},
	}
	for _, tc := range cases {
		got := Terminal(tc.in)
		if got != tc.want {
			t.Errorf("Terminal(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.ContainsAny(got, "\x1b\x07\r\x7f\u009b\u202e") || !utf8.ValidString(got) {
			t.Errorf("Terminal(%q) = %q still holds a control or invalid UTF-8", tc.in, got)
		}
	}
}

func TestTerminalWriterSanitisesWhatItFlushes(t *testing.T) {
	var out strings.Builder
	w := NewTerminalWriter(&out)
	w.WriteString("a\x1b")
	w.Write([]byte("[2J\n\xe6")) // a rune split across writes is joined before the check
	w.Write([]byte("\x97\xa5\n"))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "a\\x1b[2J\n日\n" { // \xe6\x97\xa5 is 日
		t.Errorf("flushed %q", got)
	}
}

func FuzzTerminal(f *testing.F) {
	for _, s := range []string{"", "ok", "\x1b[31m", "\u009b", "\xff\xfe", "\u202e", "a\nb\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Terminal(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Terminal(%q) = %q: invalid UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || unsafeRune(r) {
				t.Fatalf("Terminal(%q) = %q keeps %U", s, got, r)
			}
		}
		if Terminal(got) != got {
			t.Fatalf("Terminal is not idempotent on %q", s)
		}
	})
}
