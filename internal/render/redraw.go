package render

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// Redraw returns the bytes that turn a terminal showing frame old into
// frame new, rewriting only the lines that differ. A frame is the lines of
// a view drawn from the screen's top-left corner, each already made safe
// (Terminal) and shorter than the terminal is wide; old == nil means the
// screen holds something else, so it is cleared first. Each changed line is
// written at its row (cursor addressing, CSI row;1 H) and the rest of the
// row cleared (CSI K); when new is shorter, everything below it is cleared
// (CSI J). The cursor is then left on the row after the frame, where a
// shell prompt or ^C lands. Identical frames need no bytes: Redraw returns
// nil.
func Redraw(old, new []string) []byte {
	var b bytes.Buffer
	if old == nil {
		b.WriteString("\x1b[H\x1b[2J")
	}
	for i, line := range new {
		if old != nil && i < len(old) && old[i] == line {
			continue
		}
		moveTo(&b, i+1)
		b.WriteString(line)
		b.WriteString("\x1b[K")
	}
	if len(new) < len(old) {
		moveTo(&b, len(new)+1)
		b.WriteString("\x1b[J")
	}
	if b.Len() == 0 {
		return nil
	}
	moveTo(&b, len(new)+1)
	return b.Bytes()
}

// moveTo moves the cursor to the start of row (1-based).
func moveTo(b *bytes.Buffer, row int) {
	b.WriteString("\x1b[")
	b.WriteString(strconv.Itoa(row))
	b.WriteString(";1H")
}

// Screen shows successive frames of a view on w, as `ckpt status --watch`
// does. On a terminal a frame replaces the one before it, rewriting only
// the lines that changed (Redraw); elsewhere (a pipe, a file) frames
// follow each other, each ended by an empty line. A Screen is not safe for
// concurrent use.
type Screen struct {
	w        io.Writer
	terminal bool
	shown    []string // the frame on the terminal
}

// NewScreen returns a Screen drawing on w; terminal says w is one.
func NewScreen(w io.Writer, terminal bool) *Screen { return &Screen{w: w, terminal: terminal} }

// Draw shows frame, text already made safe for the terminal (Terminal),
// its lines shorter than the terminal is wide. The only error is w's.
func (s *Screen) Draw(frame string) error {
	if !s.terminal {
		_, err := io.WriteString(s.w, frame+"\n")
		return err
	}
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	_, err := s.w.Write(Redraw(s.shown, lines))
	s.shown = lines
	return err
}
