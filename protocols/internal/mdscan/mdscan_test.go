package mdscan

import (
	"slices"
	"strings"
	"testing"
)

// scan returns the lines of md as "F|text" (fenced) or " |text".
func scan(md string) []string {
	var out []string
	for l := range Lines([]byte(md)) {
		mark := " |"
		if l.Fenced {
			mark = "F|"
		}
		out = append(out, mark+l.Text)
	}
	return out
}

func TestLinesMarksFencedCodeBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     []string
	}{
		{"empty", "", []string{" |"}},
		{"final newline", "a\n", []string{" |a", " |"}},
		{"trailing white space and CRLF", "# T \t\r\nx\r\n", []string{" |# T", " |x", " |"}},
		{"backticks", "a\n```go\n## not a heading\n```\nb", []string{" |a", "F|```go", "F|## not a heading", "F|```", " |b"}},
		{"tildes, indented", "  ~~~\n```\n  ~~~ end\nb", []string{"F|  ~~~", "F|```", "F|  ~~~ end", " |b"}},
		{"a longer fence closes at three", "````\nx\n```\ny", []string{"F|````", "F|x", "F|```", " |y"}},
		{"a fence left open runs to the end", "a\n```\n# h\n", []string{" |a", "F|```", "F|# h", "F|"}},
		{"two blocks", "```\n1\n```\n2\n~~~\n3\n~~~", []string{"F|```", "F|1", "F|```", " |2", "F|~~~", "F|3", "F|~~~"}},
		{"inline code is not a fence", "`x` and ``y``\n", []string{" |`x` and ``y``", " |"}},
	} {
		if got := scan(tc.md); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLinesTrimmedAndEarlyStop(t *testing.T) {
	var got []Line
	for l := range Lines([]byte("  - item \t\nsecond\nthird")) {
		got = append(got, l)
		if len(got) == 2 {
			break
		}
	}
	want := []Line{{Text: "  - item", Trimmed: "- item"}, {Text: "second", Trimmed: "second"}}
	if !slices.Equal(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func TestOpenFence(t *testing.T) {
	for text, want := range map[string]string{
		"":                       "",
		"plain\ntext":            "",
		"```\ncode\n```":         "",
		"```go\ncode":            "```",
		"  ~~~\ncode\n```\nmore": "~~~",
		"```\n1\n```\n~~~":       "~~~",
		"````\nx\n```":           "",
		"a ``` inside a line":    "",
	} {
		if got := OpenFence(text); got != want {
			t.Errorf("OpenFence(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestHeading(t *testing.T) {
	for _, tc := range []struct {
		line  string
		level int
		text  string
		ok    bool
	}{
		{"# Title", 1, "Title", true},
		{"## Completed Tasks ##", 2, "Completed Tasks", true},
		{"   ###   spaced   ", 3, "spaced", true},
		{"###### six", 6, "six", true},
		{"##\tTab", 2, "Tab", true},
		{"# C# and F#", 1, "C# and F", true}, // closing '#'s need no space before them
		{"# ", 1, "", true},
		{"# # #", 1, "#", true}, // text that ends in '#' needs closing '#'s to be read back
		{"#tag", 0, "", false},
		{"##", 0, "", false},
		{"####### seven", 0, "", false},
		{"    # code", 0, "", false},
		{"- # item", 0, "", false},
	} {
		level, text, ok := Heading(tc.line)
		if level != tc.level || text != tc.text || ok != tc.ok {
			t.Errorf("Heading(%q) = %d %q %v, want %d %q %v", tc.line, level, text, ok, tc.level, tc.text, tc.ok)
		}
	}
}

// FuzzLines checks what the adapters rely on for any input: one Line per
// '\n'-separated line, its text trimmed as promised; every fence line is
// code; a code block starts at a fence line and ends at one (or at the end);
// a line's Fenced depends only on the lines before it; OpenFence names the
// block left open, and its marker closes it; and a heading's text reads back
// as the same heading when written with a closing '#'.
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		"", "# T\n\n```\n## x\n```\n~~~\n", "````\n```\n", "  ~~~ a\n~~~\n# C#\n", "#\t#\n###### ####\n\r\n",
		"## Current Task\n- x\n```bash\ngo test\n```\n## Continuation Prompt\nResume.\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		raw := strings.Split(string(md), "\n")
		var lines []Line
		for l := range Lines(md) {
			lines = append(lines, l)
		}
		if len(lines) != len(raw) {
			t.Fatalf("%d lines for %d line feeds", len(lines), len(raw)-1)
		}
		isMarker := func(s string) bool { return strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") }
		for i, l := range lines {
			if l.Text != strings.TrimRight(raw[i], " \t\r") || l.Trimmed != strings.TrimSpace(l.Text) {
				t.Fatalf("line %d: %+v from %q", i, l, raw[i])
			}
			if isMarker(l.Trimmed) && !l.Fenced {
				t.Fatalf("line %d %q opens or closes a fence but is not Fenced", i, l.Text)
			}
			startsBlock := l.Fenced && (i == 0 || !lines[i-1].Fenced)
			if startsBlock && !isMarker(l.Trimmed) {
				t.Fatalf("line %d %q starts a code block without a fence", i, l.Text)
			}
			endsBlock := l.Fenced && i+1 < len(lines) && !lines[i+1].Fenced
			if endsBlock && !isMarker(l.Trimmed) {
				t.Fatalf("line %d %q ends a code block without a fence", i, l.Text)
			}
			if level, text, ok := Heading(l.Text); ok {
				if level < 1 || level > 6 || strings.Trim(text, " \t\n\f\r") != text {
					t.Fatalf("Heading(%q) = %d %q", l.Text, level, text)
				}
				again := strings.Repeat("#", level) + " " + text + " #"
				if l2, t2, ok2 := Heading(again); l2 != level || t2 != text || !ok2 {
					t.Fatalf("Heading(%q) = %d %q, but Heading(%q) = %d %q %v", l.Text, level, text, again, l2, t2, ok2)
				}
			}
		}
		if open := OpenFence(string(md)); open != "" {
			if !lines[len(lines)-1].Fenced {
				t.Fatalf("OpenFence = %q after a last line that is not code", open)
			}
			if again := OpenFence(string(md) + "\n" + open); again != "" {
				t.Fatalf("the marker %q does not close the block: %q still open", open, again)
			}
		} else if last := lines[len(lines)-1]; last.Fenced && !isMarker(last.Trimmed) {
			t.Fatalf("OpenFence = \"\" but the last line %q is inside a block", last.Text)
		}
		// Streaming: cut after the middle line, the lines before keep their marks.
		if cut := len(raw) / 2; cut > 0 {
			prefix := strings.Join(raw[:cut], "\n")
			i := 0
			for l := range Lines([]byte(prefix)) {
				if l != lines[i] {
					t.Fatalf("line %d of the first %d: %+v, in the whole document %+v", i, cut, l, lines[i])
				}
				i++
			}
		}
	})
}
