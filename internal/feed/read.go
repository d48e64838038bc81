package feed

import (
	"bufio"
	"io"
	"strings"
)

// Event is one server-sent event as Read parses it.
type Event struct {
	ID   string // the stream's last event id after this event
	Type string // "" for the default ("message")
	Data string // the data lines, joined by "\n"
}

// MaxLine bounds one line of a stream Read accepts.
const MaxLine = 1 << 20

// Read parses a server-sent event stream as the HTML standard does: it
// calls line for every line read (a sign of life, keepalive comments
// included) and emit for every event that has data or moves the last
// event id (an IDOnly event has an ID and no Data), until the stream ends
// (nil), a line exceeds MaxLine, or emit or the reader fails.
func Read(r io.Reader, line func(), emit func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	sc.Split(splitLines)
	var (
		ev      Event
		data    strings.Builder
		hasData bool
		idMoved bool
	)
	for sc.Scan() {
		if line != nil {
			line()
		}
		l := sc.Text()
		if l == "" {
			if hasData || idMoved {
				ev.Data = data.String()
				if err := emit(ev); err != nil {
					return err
				}
			}
			ev.Type, ev.Data, hasData, idMoved = "", "", false, false
			data.Reset()
			continue
		}
		if l[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Type = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.ID, idMoved = value, true
			}
		}
	}
	return sc.Err()
}

// splitLines splits at the three line ends the standard allows: "\r\n",
// "\n" and "\r".
func splitLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 == len(data) && !atEOF {
				return 0, nil, nil // a "\n" may follow
			}
			if i+1 < len(data) && data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
