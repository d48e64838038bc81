package filestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// An envelope is the content of state.json and of each backup: a header and
// the folded state, in one JSON object whose members come in a fixed order so
// that the header is read without decoding the state (docs/design.md).
type envelope struct {
	Format      string `json:"format"`
	Version     int    `json:"version"`
	ID          string `json:"id"`
	Rev         int64  `json:"rev"`
	Sum         string `json:"sum"`          // the sum of event Rev
	HistorySize int64  `json:"history_size"` // bytes of history.jsonl through event Rev
	StateSum    string `json:"state_sum"`    // checksum of the state member's bytes
}

const (
	envelopeFormat  = "ckpt-state"
	envelopeVersion = 1
	stateMember     = `,"state":`
	sumLen          = 32
)

// checksum is the store's 128-bit content checksum, as history lines use.
func checksum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:sumLen/2])
}

// encodeEnvelope returns the envelope of st, whose last event has sum and
// ends at byte size of the history. The heartbeat time is not stored.
func encodeEnvelope(st *ckpt.Checkpoint, sum string, size int64) ([]byte, error) {
	c := *st
	c.Heartbeat.LastBeat, c.Heartbeat.Presence = time.Time{}, nil
	state, err := wire.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("filestore: encoding state of %s: %w", st.ID, err)
	}
	// The header by hand, in the order parseHeader reads: an ID is plain
	// JSON string content (no character of an ID needs escaping), sums are hex.
	out := make([]byte, 0, len(state)+200)
	out = append(out, `{"format":"`+envelopeFormat+`","version":`...)
	out = strconv.AppendInt(out, envelopeVersion, 10)
	out = append(out, `,"id":"`...)
	out = append(out, st.ID...)
	out = append(out, `","rev":`...)
	out = strconv.AppendInt(out, st.Rev, 10)
	out = append(out, `,"sum":"`...)
	out = append(out, sum...)
	out = append(out, `","history_size":`...)
	out = strconv.AppendInt(out, size, 10)
	out = append(out, `,"state_sum":"`...)
	out = append(out, checksum(state)...)
	out = append(out, '"')
	out = append(out, stateMember...)
	out = append(out, state...)
	return append(out, '}', '\n'), nil
}

// parseEnvelope reads an envelope of checkpoint id. It fails, without
// panicking, on anything but a complete, self-consistent envelope of id: a
// torn or garbage file, a checksum mismatch, another checkpoint's state.
func parseEnvelope(data []byte, id string) (envelope, *ckpt.Checkpoint, error) {
	env, state, err := splitEnvelope(data, id)
	if err != nil {
		return env, nil, err
	}
	c := new(ckpt.Checkpoint)
	if err := wire.Unmarshal(state, c); err != nil {
		return env, nil, fmt.Errorf("state: %v", err)
	}
	if c.ID != id || c.Rev != env.Rev {
		return env, nil, fmt.Errorf("state is %q at revision %d, the envelope says %q at %d", c.ID, c.Rev, id, env.Rev)
	}
	return env, c, nil
}

// splitEnvelope checks an envelope of id as parseEnvelope does, all but
// the state's decoding, and returns its header and the state member's
// bytes, which match their checksum.
func splitEnvelope(data []byte, id string) (envelope, []byte, error) {
	data = bytes.TrimSuffix(data, []byte{'\n'})
	i := bytes.Index(data, []byte(stateMember))
	if i < 0 || len(data) < i+len(stateMember)+2 || data[len(data)-1] != '}' {
		return envelope{}, nil, fmt.Errorf("not a state envelope (empty, torn or garbage)")
	}
	env, err := parseHeader(data[:i])
	if err != nil {
		return env, nil, err
	}
	if env.ID != id {
		return env, nil, fmt.Errorf("state envelope is of checkpoint %q, not %q", env.ID, id)
	}
	if env.Rev < 1 || env.HistorySize < 1 || len(env.Sum) != sumLen {
		return env, nil, fmt.Errorf("state envelope header is incomplete (rev %d, history size %d, sum %q)", env.Rev, env.HistorySize, env.Sum)
	}
	state := data[i+len(stateMember) : len(data)-1]
	if got := checksum(state); got != env.StateSum {
		return env, nil, fmt.Errorf("state checksum is %s, the envelope says %s (edited or damaged)", got, env.StateSum)
	}
	return env, state, nil
}

// parseHeader reads an envelope header, the bytes before `,"state":`,
// exactly as encodeEnvelope writes them (member order, no spaces): a hand
// parser, because List parses 10,000 of them. Anything else is an error.
func parseHeader(h []byte) (envelope, error) {
	var env envelope
	r := headerReader{rest: h}
	r.lit(`{"format":"` + envelopeFormat + `","version":`)
	env.Format = envelopeFormat
	env.Version = int(r.number())
	r.lit(`,"id":"`)
	env.ID = r.until('"')
	r.lit(`,"rev":`)
	env.Rev = r.number()
	r.lit(`,"sum":"`)
	env.Sum = r.until('"')
	r.lit(`,"history_size":`)
	env.HistorySize = r.number()
	r.lit(`,"state_sum":"`)
	env.StateSum = r.until('"')
	if r.bad || len(r.rest) != 0 {
		return envelope{}, fmt.Errorf("state envelope header is not one this ckpt writes (format %s version %d)", envelopeFormat, envelopeVersion)
	}
	if env.Version != envelopeVersion {
		return envelope{}, fmt.Errorf("state envelope has version %d, want %d", env.Version, envelopeVersion)
	}
	if !isSum(env.Sum) || !isSum(env.StateSum) {
		return envelope{}, fmt.Errorf("state envelope checksums %q and %q are not 32 hex digits", env.Sum, env.StateSum)
	}
	return env, nil
}

// headerReader consumes an envelope header; bad is set at the first
// mismatch and stays set.
type headerReader struct {
	rest []byte
	bad  bool
}

func (r *headerReader) lit(s string) {
	if r.bad || !bytes.HasPrefix(r.rest, []byte(s)) {
		r.bad = true
		return
	}
	r.rest = r.rest[len(s):]
}

// number reads a non-negative decimal integer of at most 18 digits.
func (r *headerReader) number() int64 {
	n, i := int64(0), 0
	for ; !r.bad && i < len(r.rest) && i < 18 && r.rest[i] >= '0' && r.rest[i] <= '9'; i++ {
		n = n*10 + int64(r.rest[i]-'0')
	}
	if i == 0 || i > 1 && r.rest[0] == '0' {
		r.bad = true
		return 0
	}
	r.rest = r.rest[i:]
	return n
}

// until reads up to (not including) the byte c, and consumes c.
func (r *headerReader) until(c byte) string {
	i := bytes.IndexByte(r.rest, c)
	if r.bad || i < 0 {
		r.bad = true
		return ""
	}
	s := string(r.rest[:i])
	r.rest = r.rest[i+1:]
	return s
}

// isSum reports whether s is a checksum as the store writes them: 32
// lowercase hex digits.
func isSum(s string) bool {
	if len(s) != sumLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
