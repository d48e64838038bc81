package render

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "short", 10, "short"},
		{"exactly fits", "0123456789", 10, "0123456789"},
		{"cut with ellipsis", "0123456789abc", 10, "0123456…"},
		{"cut before a rune, not inside it", "aaaaaa日本語", 12, "aaaaaa日…"},
		{"cut at a near word boundary", "alpha beta gamma delta", 15, "alpha beta…"},
		{"breaks and controls become single spaces", "a\nb\r\n\tc\x00d\u2028e  f ", 40, "a b c d e f"},
		{"invalid UTF-8 becomes U+FFFD", "ok\xff\xfeok", 40, "ok\uFFFD\uFFFDok"},
		{"a rune cut by the input stays marked", "abc" + "日本"[:4], 40, "abc日\uFFFD"},
		{"too small for the ellipsis", "abcdef", 2, ""},
		{"huge input keeps its start", strings.Repeat("é", 1<<20), 9, "ééé…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clip(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("clip(%q, %d) = %q, want %q", trimForLog(tc.in), tc.max, got, tc.want)
			}
			if len(got) > tc.max || !utf8.ValidString(got) {
				t.Errorf("clip gave %d bytes (max %d), valid UTF-8: %v", len(got), tc.max, utf8.ValidString(got))
			}
		})
	}
}

func trimForLog(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func TestClipRunes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"日本語テキスト", 7, "日本語テキスト"},
		{"日本語テキストです", 7, "日本語テキス…"},
		{"tab\tand\nnewline", 20, "tab and newline"},
	} {
		if got := clipRunes(tc.in, tc.n); got != tc.want {
			t.Errorf("clipRunes(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestBlockStart(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"# heading", `\# heading`},
		{"   ## indented heading", `\## indented heading`},
		{"```go", "\\```go"},
		{"~~~", `\~~~`},
		{"<!-- comment", `\<!-- comment`},
		{"> quote", `\> quote`},
		{"| a | b |", `\| a | b |`},
		{"===", `\===`},
		{"- - -", `\- - -`},
		{"- # item heading", `- \# item heading`},
		{"1. ```", "1. \\```"},
		{"* - <b>", `* - \<b>`},
		{"-notalist", "-notalist"},
		{"C# is fine", "C# is fine"},
	} {
		if got := blockStart(tc.in); got != tc.want {
			t.Errorf("blockStart(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMultiLine(t *testing.T) {
	in := "\n\nStep one:\r\n# not a heading\n\n\n\n    indented\n```\nend  \n\n"
	want := "Step one:\n\\# not a heading\n\nindented\n\\```\nend"
	if got := multiLine(in, 1000); got != want {
		t.Errorf("multiLine = %q, want %q", got, want)
	}
	if got := multiLine(strings.Repeat("line\n", 100), 22); got != "line\nline\nline\nline…" {
		t.Errorf("multiLine shortened = %q", got)
	}
}

func TestLastLines(t *testing.T) {
	notes := "first line of the notes\nsecond line of the notes\nthird\nfourth"
	if got := lastLines(notes, 100); got != notes {
		t.Errorf("lastLines kept %q, want all", got)
	}
	want := "… (earlier notes left out)\nthird\nfourth"
	if got := lastLines(notes, len(want)); got != want {
		t.Errorf("lastLines = %q, want %q", got, want)
	}
	if got := lastLines("x\n"+strings.Repeat("日", 100), 40); got != "… (earlier notes left out)\n日日…" {
		t.Errorf("lastLines of a long last line = %q", got)
	}
}
