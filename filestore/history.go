package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

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
	k, err := json.Marshal(key)
	if err != nil {
		return ckpt.Event{}, false, err
	}
	needle := append([]byte(`"key":`), k...)
	buf, start, err := readWindow(path, end)
	if err != nil {
		return ckpt.Event{}, false, err
	}
	for _, line := range windowLines(buf, start) {
		if bytes.Contains(line, needle) {
			if e, err := ckpt.DecodeLine(line); err == nil && e.Key == key {
				return e, true, nil
			}
		}
	}
	return ckpt.Event{}, false, nil
}

// readWindow reads the history that ends at byte end backwards, in growing
// chunks, until it holds more than ckpt.KeyWindow line ends or the whole
// file: buf holds bytes [start, end).
func readWindow(path string, end int64) (buf []byte, start int64, err error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	chunk := int64(64 << 10)
	start = end
	for start > 0 && bytes.Count(buf, []byte{'\n'}) <= ckpt.KeyWindow {
		from := max(start-chunk, 0)
		more := make([]byte, start-from, int(start-from)+len(buf))
		if _, err := f.ReadAt(more, from); err != nil && err != io.EOF {
			return nil, 0, err
		}
		buf, start = append(more, buf...), from
		chunk *= 2
	}
	return buf, start, nil
}

// windowLines returns the last ckpt.KeyWindow complete lines of buf (bytes
// [start, end) of a history), newest first. The first partial line of buf
// (when start > 0) is outside the window or incomplete and is skipped.
func windowLines(buf []byte, start int64) [][]byte {
	var lines [][]byte
	stop := len(buf)
	for len(lines) < ckpt.KeyWindow && stop > 0 {
		i := bytes.LastIndexByte(buf[:stop-1], '\n')
		if i < 0 && start > 0 {
			break
		}
		lines = append(lines, buf[i+1:stop])
		stop = i + 1
	}
	return lines
}

// lineError describes damage at a bad line for an error message.
func (b *badLine) String() string {
	return fmt.Sprintf("history.jsonl is damaged at byte %d (event %d): %s", b.offset, b.seq, reason(b.err))
}
