package render

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	ckpt "github.com/ckpt-dev/ckpt"
)

// ellipsis marks text that was shortened. It is one rune, three bytes.
const ellipsis = "…"

// Age renders how long ago something happened, as sitebuilder's (seed 003) STATUS.md does:
// "just now" under a minute, then "N min ago", "N h ago" and "N d ago",
// rounded down. A negative duration (a clock a little ahead) is "just now".
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d d ago", int(d/(24*time.Hour)))
}

// percentText renders a percentage rounded down, so work that is not
// finished never shows as 100%.
func percentText(p float64) string {
	return fmt.Sprintf("%d%%", ckpt.RoundPercent(p))
}

// bar renders a text progress bar of width cells, e.g. "[####------]".
func bar(p float64, width int) string {
	full := ckpt.RoundPercent(p) * width / 100
	return "[" + strings.Repeat("#", full) + strings.Repeat("-", width-full) + "]"
}

// isBreak reports runes that would end or disturb a line: C0 controls, DEL,
// NEL and the Unicode line and paragraph separators.
func isBreak(r rune) bool {
	return r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029
}

// oneLine makes s safe to place on one line: invalid UTF-8 becomes U+FFFD,
// line breaks, tabs and other controls become spaces, runs of spaces
// collapse to one, and the ends are trimmed.
func oneLine(s string) string {
	if plainLine(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s { // ranging decodes invalid bytes as U+FFFD
		if isBreak(r) || r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// plainLine reports whether oneLine would return s unchanged: printable
// ASCII with single inner spaces. Most text is, and needs no copy.
func plainLine(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			if i == 0 || i == len(s)-1 || s[i+1] == ' ' {
				return false
			}
			continue
		}
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// precut bounds the work of cleaning a huge string that will be shortened
// to max bytes anyway: it keeps a generous prefix that ends on a rune start.
func precut(s string, max int) (string, bool) {
	lim := 4*max + 64
	if len(s) <= lim {
		return s, false
	}
	for lim > 0 && !utf8.RuneStart(s[lim]) {
		lim--
	}
	return s[:lim], true
}

// shorten returns s if it fits in max bytes, else a prefix of s ending on a
// rune boundary (preferably a word boundary) followed by an ellipsis, max
// bytes in all. s must be valid UTF-8. forced adds the ellipsis even when s
// fits, for text already cut elsewhere. A max too small for the ellipsis
// gives "".
func shorten(s string, max int, forced bool) string {
	if !forced && len(s) <= max {
		return s
	}
	if max < len(ellipsis) {
		return ""
	}
	cut := min(max-len(ellipsis), len(s))
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if cut < len(s) {
		// Prefer to end at a space if one is near.
		if sp := strings.LastIndexByte(s[:cut], ' '); sp > 0 && cut-sp <= 24 {
			cut = sp
		}
	}
	return strings.TrimRight(s[:cut], " \n") + ellipsis
}

// clip is oneLine then shorten to max bytes.
func clip(s string, max int) string {
	s, cut := precut(s, max)
	return shorten(oneLine(s), max, cut)
}

// clipRunes is oneLine then shortened to at most n runes, for table cells
// whose width is counted in runes.
func clipRunes(s string, n int) string {
	s, cut := precut(s, 4*n)
	s = oneLine(s)
	if !cut && utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return strings.TrimRight(s[:i], " ") + ellipsis
}

// blockStart escapes the start of text that begins a Markdown block (a line,
// or a list item's content) so that it cannot open a heading, a setext
// underline, a code fence, an HTML block, a block quote or a table row of its
// own: a line made only of '-', '=', '*', '_' and spaces (a thematic break or
// setext underline) or starting with '#', '<', '`', '~', '|' or '>' gets a
// backslash in front. List markers are kept, and the item's text after them
// is escaped the same way. Leading spaces are dropped so that the text cannot
// become an indented code block.
func blockStart(s string) string {
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return s
	}
	if strings.Trim(s, "-=*_ ") == "" {
		return `\` + s
	}
	if m := listMarker(s); m > 0 {
		return s[:m] + blockStart(s[m:])
	}
	switch s[0] {
	case '#', '<', '`', '~', '|', '>':
		return `\` + s
	}
	return s
}

// listMarker returns the length of the list marker and the space after it
// at the start of s ("- ", "* ", "+ ", "12. ", "3) "), or 0.
func listMarker(s string) int {
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ' {
		return 2
	}
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return i + 2
	}
	return 0
}

// cell makes s safe inside a Markdown table cell: one line, pipes escaped.
func cell(s string, n int) string {
	s = clipRunes(s, n)
	if s == "" {
		return "—"
	}
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

// multiLine cleans free text that may span lines (resume instructions,
// notes): invalid UTF-8 becomes U+FFFD, CR LF becomes LF, other controls
// become spaces, blank lines collapse to one, and every line is made safe
// with blockStart. The result is at most max bytes; a longer text is cut at a
// rune boundary and ends with an ellipsis.
func multiLine(s string, max int) string {
	s, cut := precut(s, max)
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	blank := true // drop leading blank lines
	for _, l := range lines {
		l = blockStart(oneLine(l))
		if l == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return shorten(strings.Join(out, "\n"), max, cut)
}

// lastLines keeps the end of multi-line text that has already been cleaned
// by multiLine-style rules, within max bytes: whole lines from the end, with
// a first line saying earlier text was left out. Notes grow at the end, so
// the newest are the ones worth keeping.
func lastLines(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const lead = ellipsis + " (earlier notes left out)"
	lines := strings.Split(s, "\n")
	size := len(lead)
	first := len(lines)
	for first > 0 && size+1+len(lines[first-1]) <= max {
		size += 1 + len(lines[first-1])
		first--
	}
	if first == len(lines) { // even the last line is too long: keep its start
		return lead + "\n" + shorten(lines[len(lines)-1], max-len(lead)-1, true)
	}
	return lead + "\n" + strings.Join(lines[first:], "\n")
}

// tail returns about the last max bytes of s, starting on a rune boundary
// and, when one is near, at the start of a line.
func tail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 && nl < max/2 {
		i += nl + 1
	}
	return s[i:]
}
