package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ckpt-dev/ckpt"
)

// errStop ends a scan early without marking damage.
var errStop = errors.New("stop scan")

// scanResult is what scanHistory found.
type scanResult struct {
	chain ckpt.Chain // after the last good event
	end   int64      // file offset just past the last good line
	torn  int64      // bytes after end of a last line without its newline; 0 if none
	lines int        // good lines scanned
	// bad is the damage found: a complete line that fails its checksum,
	// breaks the chain or that fn refused. nil if none.
	bad *badLine
}

// badLine locates damage in a history.
type badLine struct {
	offset int64 // file offset where the bad line starts
	seq    int64 // the seq the line should have had
	err    error
}

// scanHistory walks the history lines in data, which starts at file offset
// base and continues chain. Each good event goes to fn (which may be nil)
// with the file offset just past its line;
// fn returning errStop ends the scan there, any other error marks the line as
// bad. Only a last line without its newline is a torn tail: a write that was
// never completed (an append is one write ending in the newline). A complete
// line that fails, the last one too, was written whole and may have been
// acknowledged: it is damage.
func scanHistory(data []byte, base int64, chain ckpt.Chain, fn func(e ckpt.Event, end int64) error) scanResult {
	r := scanResult{chain: chain, end: base}
	pos := 0
	for pos < len(data) {
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			r.torn = int64(len(data) - pos)
			break
		}
		next := pos + nl + 1
		e, err := ckpt.DecodeLine(data[pos:next])
		if err == nil {
			err = r.chain.Next(e)
		}
		if err == nil && fn != nil {
			if err = fn(e, base+int64(next)); err == errStop {
				r.lines++
				r.end = base + int64(next)
				break
			}
		}
		if err != nil {
			r.bad = &badLine{offset: base + int64(pos), seq: r.chain.Seq + 1, err: err}
			break
		}
		r.lines++
		pos = next
		r.end = base + int64(pos)
	}
	return r
}

// readRange reads bytes [from, to) of the file at path; fewer if the file is
// shorter now.
func readRange(path string, from, to int64) ([]byte, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, to-from)
	n, err := f.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// findKey looks for an event with key among the last ckpt.KeyWindow lines
// of the history that ends at byte end. It returns the event and true if
// found.
func findKey(path string, end int64, key string) (ckpt.Event, bool, error) {
	buf, start, err := readWindow(path, end)
	if err != nil {
		return ckpt.Event{}, false, err
	}
	e, ok, err := lastKeyed(buf[windowStart(buf, start, ckpt.KeyWindow):], key)
	return e, ok, err
}

// lastKeyed returns the newest of lines (whole history lines, oldest
// first) whose event has key. It searches the bytes for the key's member
// (`"key":` and the key as JSON) in one pass and decodes only the lines
// where it occurs, newest first: a fresh process's keyed append (every
// hook's) searched a thousand lines one by one for about 1 ms.
func lastKeyed(lines []byte, key string) (ckpt.Event, bool, error) {
	k, err := json.Marshal(key)
	if err != nil {
		return ckpt.Event{}, false, err
	}
	needle := append([]byte(`"key":`), k...)
	at := occurrences(lines, needle)
	for n := len(at) - 1; n >= 0; n-- {
		from := bytes.LastIndexByte(lines[:at[n]], '\n') + 1
		to := len(lines)
		if j := bytes.IndexByte(lines[at[n]:], '\n'); j >= 0 {
			to = at[n] + j + 1
		}
		if e, err := ckpt.DecodeLine(lines[from:to]); err == nil && e.Key == key {
			return e, true, nil
		}
	}
	return ckpt.Event{}, false, nil
}

// occurrences returns where needle starts in b, in order. It searches for
// needle's last 16 bytes and then compares the rest: a key's member starts
// with `"key":"` and often a long prefix its keys share (a hook's
// "hook:tool:SESSION:"), which bytes.Index, going by the first bytes,
// would find and compare on every line; the end of a key is its own.
func occurrences(b, needle []byte) []int {
	tail := needle[max(len(needle)-16, 0):]
	head := len(needle) - len(tail)
	var at []int
	for i := head; i < len(b); {
		j := bytes.Index(b[i:], tail)
		if j < 0 {
			break
		}
		if p := i + j - head; bytes.Equal(b[p:p+head], needle[:head]) {
			at = append(at, p)
		}
		i += j + 1
	}
	return at
}

// readWindow reads the history that ends at byte end backwards, in
// chunks, until it holds more than ckpt.KeyWindow line ends or the whole
// file: buf holds bytes [start, end). After the first chunk the next is
// sized from the lines' mean length (with a quarter more), so that a
// window of short lines is not read twice over.
func readWindow(path string, end int64) (buf []byte, start int64, err error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	chunk, lines := int64(64<<10), 0
	start = end
	for start > 0 && lines <= ckpt.KeyWindow {
		from := max(start-chunk, 0)
		more := make([]byte, start-from, int(start-from)+len(buf))
		if _, err := f.ReadAt(more, from); err != nil && err != io.EOF {
			return nil, 0, err
		}
		lines += bytes.Count(more, []byte{'\n'})
		buf, start = append(more, buf...), from
		if lines > 0 {
			chunk = max(int64(ckpt.KeyWindow+1-lines)*int64(len(buf))/int64(lines)*5/4, 4<<10)
		} else {
			chunk *= 2
		}
	}
	return buf, start, nil
}

// windowStart returns where in buf (bytes [start, end) of a history) the
// last window complete lines begin. The first partial line of buf (when
// start > 0) is outside the window or incomplete and is never in it; a
// last line without its newline counts as a line.
func windowStart(buf []byte, start int64, window int) int {
	if len(buf) == 0 {
		return 0
	}
	lines := bytes.Count(buf, []byte{'\n'})
	if buf[len(buf)-1] != '\n' {
		lines++
	}
	i := 0
	if start > 0 {
		i = bytes.IndexByte(buf, '\n') + 1
		if i == 0 {
			return len(buf)
		}
		lines--
	}
	for ; lines > window; lines-- {
		i += bytes.IndexByte(buf[i:], '\n') + 1
	}
	return i
}

// windowLines returns the last ckpt.KeyWindow complete lines of buf (bytes
// [start, end) of a history), newest first (see windowStart).
func windowLines(buf []byte, start int64) [][]byte {
	var lines [][]byte
	for rest := buf[windowStart(buf, start, ckpt.KeyWindow):]; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n') + 1
		if i == 0 {
			i = len(rest)
		}
		lines, rest = append(lines, rest[:i]), rest[i:]
	}
	slices.Reverse(lines)
	return lines
}

// lineError describes damage at a bad line for an error message.
func (b *badLine) String() string {
	return fmt.Sprintf("history.jsonl is damaged at byte %d (event %d): %s", b.offset, b.seq, reason(b.err))
}
