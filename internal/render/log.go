package render

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// LogEntry is one event as `ckpt log --json` prints it: the history line's
// fields, checksum included.
type LogEntry struct {
	Seq   int64           `json:"seq"`
	At    time.Time       `json:"at"`
	Type  ckpt.EventType  `json:"type"`
	Actor ckpt.Actor      `json:"actor"`
	Key   string          `json:"key,omitempty"`
	Trace string          `json:"trace,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
	Prev  string          `json:"prev,omitempty"`
	Sum   string          `json:"sum"`
}

// LogJSON writes events as `ckpt log --json` does: one LogEntry per line,
// in the order given. The only error is w's.
func LogJSON(w io.Writer, events []ckpt.Event) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range events {
		if err := enc.Encode(LogEntry{Seq: e.Seq, At: e.At, Type: e.Type, Actor: e.Actor, Key: e.Key, Trace: e.Trace, Data: e.Data, Prev: e.Prev, Sum: e.Sum}); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// LogText writes events of checkpoint id as `ckpt log` does, one line each:
// revision, time, type, actor (agent@session, "-" for none), what the event
// did (DescribeEvent) and its idempotency key. before is the state just
// before the first event (nil when the events start at revision 1): the
// events are replayed on it so each can be named by its result (a step's
// status, a cycle count); an event that does not replay is named by its
// type. Stored text goes through Terminal. The only error is w's.
func LogText(w io.Writer, id string, before *ckpt.Checkpoint, events []ckpt.Event) error {
	human := NewTerminalWriter(w)
	state := before
	for _, e := range events {
		desc := string(e.Type)
		if next, err := ckpt.Apply(id, state, e); err == nil {
			state = next
			desc = DescribeEvent(state, e)
		}
		who := Dash(e.Actor.Agent)
		if e.Actor.Session != "" {
			who += "@" + e.Actor.Session
		}
		line := fmt.Sprintf("%4d  %s  %-10s  %-14s  %s", e.Seq, e.At.Format(TimeLayout), e.Type, who, desc)
		if e.Key != "" {
			line += "  [key " + e.Key + "]"
		}
		fmt.Fprintln(human, line)
	}
	return human.Flush()
}
