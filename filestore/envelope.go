package filestore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ckpt-dev/ckpt"
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
	c.Heartbeat.LastBeat = time.Time{}
	state, err := json.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("filestore: encoding state of %s: %w", st.ID, err)
	}
	head, err := json.Marshal(envelope{
		Format: envelopeFormat, Version: envelopeVersion, ID: st.ID, Rev: st.Rev,
		Sum: sum, HistorySize: size, StateSum: checksum(state),
	})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(stateMember)+len(state)+2)
	out = append(out, head[:len(head)-1]...)
	out = append(out, stateMember...)
	out = append(out, state...)
	return append(out, '}', '\n'), nil
}

// parseEnvelope reads an envelope of checkpoint id. It fails, without
// panicking, on anything but a complete, self-consistent envelope of id: a
// torn or garbage file, a checksum mismatch, another checkpoint's state.
func parseEnvelope(data []byte, id string) (envelope, *ckpt.Checkpoint, error) {
	var env envelope
	data = bytes.TrimSuffix(data, []byte{'\n'})
	i := bytes.Index(data, []byte(stateMember))
	if i < 0 || len(data) < i+len(stateMember)+2 || data[len(data)-1] != '}' {
		return env, nil, fmt.Errorf("not a state envelope (empty, torn or garbage)")
	}
	head := make([]byte, 0, i+1)
	head = append(append(head, data[:i]...), '}')
	if err := json.Unmarshal(head, &env); err != nil {
		return env, nil, fmt.Errorf("state envelope header: %v", err)
	}
	if env.Format != envelopeFormat || env.Version != envelopeVersion {
		return env, nil, fmt.Errorf("state envelope has format %q version %d, want %q %d", env.Format, env.Version, envelopeFormat, envelopeVersion)
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
	var c ckpt.Checkpoint
	if err := json.Unmarshal(state, &c); err != nil {
		return env, nil, fmt.Errorf("state: %v", err)
	}
	if c.ID != id || c.Rev != env.Rev {
		return env, nil, fmt.Errorf("state is %q at revision %d, the envelope says %q at %d", c.ID, c.Rev, id, env.Rev)
	}
	return env, &c, nil
}
