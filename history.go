package ckpt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// A history line is one event as a JSON object on one line, with its
// checksum as the last member:
//
//	{"seq":2,"at":"…","type":"step",…,"prev":"<sum of line 1>","sum":"<32 hex>"}
//
// sum is the first 128 bits of SHA-256, in hex, over the line's bytes with the
// sum member removed (the line up to `,"sum":` followed by `}`). Because the
// hashed bytes include prev, each line checks itself and its predecessor:
// a torn line, a flipped byte, an edited or a missing line all break a check.

const (
	sumHexLen = 32
	sumPrefix = `,"sum":"`
	sumSuffix = `"}`
)

// EncodeLine returns e's history line, newline included, and its checksum.
// The caller sets e.Seq and e.Prev first; e.Sum is ignored.
func EncodeLine(e Event) (line []byte, sum string, err error) {
	body, err := marshalJSON(e)
	if err != nil {
		return nil, "", fmt.Errorf("ckpt: encoding event %d: %w", e.Seq, err)
	}
	sum = lineSum(body)
	line = make([]byte, 0, len(body)+len(sumPrefix)+sumHexLen+len(sumSuffix)+1)
	line = append(line, body[:len(body)-1]...)
	line = append(line, sumPrefix...)
	line = append(line, sum...)
	line = append(line, sumSuffix...)
	line = append(line, '\n')
	return line, sum, nil
}

func lineSum(body []byte) string {
	h := sha256.Sum256(body)
	return hex.EncodeToString(h[:sumHexLen/2])
}

// DecodeLine parses one history line (with or without its newline) and
// checks its own checksum. It does not check the chain: see Chain. Errors
// wrap ErrCorrupt and say what is wrong.
func DecodeLine(line []byte) (Event, error) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	tail := len(sumPrefix) + sumHexLen + len(sumSuffix)
	if len(line) < tail+2 || line[0] != '{' || !bytes.HasSuffix(line, []byte(sumSuffix)) ||
		!bytes.Equal(line[len(line)-tail:len(line)-tail+len(sumPrefix)], []byte(sumPrefix)) {
		return Event{}, fmt.Errorf("%w: history line is not a complete checksummed event (torn or edited)", ErrCorrupt)
	}
	sum := string(line[len(line)-sumHexLen-len(sumSuffix) : len(line)-len(sumSuffix)])
	body := make([]byte, 0, len(line)-tail+1)
	body = append(body, line[:len(line)-tail]...)
	body = append(body, '}')
	if got := lineSum(body); got != sum {
		return Event{}, fmt.Errorf("%w: history line checksum is %s, the line says %s (edited or damaged)", ErrCorrupt, got, sum)
	}
	var e Event
	if err := unmarshalJSON(body, &e); err != nil {
		return Event{}, fmt.Errorf("%w: history line: %v", ErrCorrupt, err)
	}
	if e.Seq < 1 || e.Type == "" {
		return Event{}, fmt.Errorf("%w: history line has no seq or type", ErrCorrupt)
	}
	e.Sum = sum
	return e, nil
}

// Chain checks that events follow each other: seqs dense from 1 and each
// Prev equal to the Sum before it. The zero Chain expects the first event.
type Chain struct {
	Seq int64  // the last event's seq, 0 before the first
	Sum string // the last event's sum
}

// Next checks e against the chain so far and advances it. The error wraps
// ErrCorrupt.
func (c *Chain) Next(e Event) error {
	if e.Seq != c.Seq+1 {
		return fmt.Errorf("%w: event seq %d follows %d (a line is missing or out of order)", ErrCorrupt, e.Seq, c.Seq)
	}
	if e.Prev != c.Sum {
		return fmt.Errorf("%w: event %d does not chain to event %d (prev %q, want %q)", ErrCorrupt, e.Seq, c.Seq, e.Prev, c.Sum)
	}
	c.Seq, c.Sum = e.Seq, e.Sum
	return nil
}
