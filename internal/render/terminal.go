package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Terminal returns s made safe to print to a terminal: text stored in a
// checkpoint (a title, a note, a step name, an agent's name) must not move
// the cursor, recolour, retitle the window, hide text or reorder it. Line
// feeds and tabs are kept. Every other C0 control and DEL is shown as a Go
// escape (ESC as \x1b), every C1 control and the Unicode line, paragraph
// and bidirectional controls as \uXXXX, and invalid UTF-8 (a raw 8-bit CSI
// byte, 0x9b, among it) as U+FFFD. Printable text, all of Unicode included,
// is kept as it is, and clean text is returned without a copy.
//
// Every human view of the CLI goes through it, once, as the last step
// (TerminalWriter); JSON output does not, it is escaped by encoding/json.
func Terminal(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] { // ranging decodes invalid bytes as U+FFFD
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// unsafeRune reports the non-ASCII runes a terminal acts on or that change
// how the text around them reads: C1 controls, the line and paragraph
// separators, and the bidirectional embeddings, overrides and isolates.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// TerminalWriter collects a human view and writes it through Terminal when
// flushed, so that no view can forget to: a command writes its whole view
// (tables from text/tabwriter included) to it and flushes once.
type TerminalWriter struct {
	w   io.Writer
	buf bytes.Buffer
}

// NewTerminalWriter returns a TerminalWriter that writes to w.
func NewTerminalWriter(w io.Writer) *TerminalWriter { return &TerminalWriter{w: w} }

// Write buffers p; it never fails.
func (t *TerminalWriter) Write(p []byte) (int, error) { return t.buf.Write(p) }

// WriteString buffers s; it never fails.
func (t *TerminalWriter) WriteString(s string) (int, error) { return t.buf.WriteString(s) }

// Flush writes what was buffered, made safe, and empties the buffer.
func (t *TerminalWriter) Flush() error {
	s := Terminal(t.buf.String())
	t.buf.Reset()
	_, err := io.WriteString(t.w, s)
	return err
}
