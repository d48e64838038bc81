package render

import (
	"bytes"
	"strconv"
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
