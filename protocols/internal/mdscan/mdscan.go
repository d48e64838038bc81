// Package mdscan reads Markdown line by line the way the seed adapters
// (protocols/superpowers, ccc, agentcheckpoints and sitebuilder) need it:
// each line with its trailing white space gone, fenced code blocks marked so
// that nothing in them is taken for a heading, field or table row, and ATX
// headings ("## Title") recognised.
//
// It is deliberately lenient rather than CommonMark: the files it reads are
// written by agents and people, by hand. It keeps no state between calls and
// is safe for concurrent use.
package mdscan

import (
	"iter"
	"strings"

	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
)

// Line is one line of a Markdown document.
type Line struct {
	// Text is the line without its line feed and without trailing spaces,
	// tabs and carriage returns.
	Text string
	// Trimmed is Text without leading white space as well.
	Trimmed string
	// Fenced is true for a line of a fenced code block, the lines that open
	// and close it included: such a line is code, and nothing else.
	Fenced bool
}

// Lines yields the lines of md, split at each '\n' (so an empty md is one
// empty line, and a final '\n' is followed by one).
//
// A fence opens at a line whose Trimmed starts with "```" or "~~~" and
// closes at the next line whose Trimmed starts with the same three
// characters; a fence left open runs to the end. Unlike CommonMark, the
// fence may be indented any amount and a closing fence may carry text.
func Lines(md []byte) iter.Seq[Line] {
	return func(yield func(Line) bool) {
		var f fence
		for text := range strings.SplitSeq(string(md), "\n") {
			text = strings.TrimRight(text, " \t\r")
			l := Line{Text: text, Trimmed: strings.TrimSpace(text)}
			l.Fenced = f.next(l.Trimmed)
			if !yield(l) {
				return
			}
		}
	}
}

// OpenFence returns the marker ("```" or "~~~") of the code block text
// leaves open at its end, as Lines reads it, or "" when text closes every
// block it opens. Appending a line feed and the marker closes the block, so
// that it cannot swallow what is written after text.
func OpenFence(text string) string {
	var f fence
	for line := range strings.SplitSeq(text, "\n") {
		f.next(strings.TrimSpace(line))
	}
	return f.marker
}

// fence follows the code blocks of a document, one trimmed line at a time.
type fence struct {
	marker string // the open block's first three characters, "" outside one
}

// next reports whether the line is code (inside a block or one of its
// fences), and opens or closes a block at a fence.
func (f *fence) next(trimmed string) bool {
	switch {
	case f.marker != "":
		if strings.HasPrefix(trimmed, f.marker) {
			f.marker = ""
		}
		return true
	case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
		f.marker = trimmed[:3]
		return true
	}
	return false
}

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var heading = lazyregexp.New(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)

// Heading reads line as an ATX heading: up to three white-space characters,
// one to six '#', white space, the text, and optionally closing '#'s. It
// returns the number of '#' (1 to 6) and the text without the surrounding
// ASCII white space and closing '#'s ("## Title ##" gives 2, "Title"); ok is
// false for any other line, such as "#tag", a lone "##" or "####### seven".
// It does not know about code fences: use it on lines Lines did not mark
// Fenced.
//
// Closing '#'s need no space before them, and Lines trims trailing white
// space: a heading written with a text Heading returned reads back as that
// text when written as "## " + text + " #", but as "## " + text only when
// text is neither empty nor ends in '#'.
func Heading(line string) (level int, text string, ok bool) {
	m := heading.Get().FindStringSubmatch(line)
	if m == nil {
		return 0, "", false
	}
	return len(m[1]), m[2], true
}
