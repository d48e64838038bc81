package request

import (
	"errors"
	"reflect"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// TestHookRequests: the writes hooks and mirrors make build the event each
// records, and refuse one that would record nothing.
func TestHookRequests(t *testing.T) {
	cs := &ckpt.CodeState{Root: "/src/app", Branch: "main"}
	state := &ckpt.Checkpoint{ID: "w", Title: "Imported"}
	for _, c := range []struct {
		r        Request
		typ      ckpt.EventType
		data     any
		refusing Request
	}{
		{JoinSession{Session: "s2"}, ckpt.EventResumed, ckpt.SessionChange{Session: ckpt.Session{ID: "s2"}}, JoinSession{Session: " "}},
		{Code{State: cs}, ckpt.EventCode, cs, Code{}},
		{Delivered{IDs: []string{"m1"}, Via: "claude-code Stop", Session: "s1"}, ckpt.EventDelivered,
			ckpt.Delivery{IDs: []string{"m1"}, Via: "claude-code Stop", Session: "s1"}, Delivered{IDs: []string{""}}},
		{Import{State: state, Source: "ccc:.ccc-progress.md"}, ckpt.EventImported,
			ckpt.Snapshot{State: *state, Source: "ccc:.ccc-progress.md"}, Import{Source: "x"}},
	} {
		typ, data, err := c.r.Build(nil)
		if err != nil || typ != c.typ || !reflect.DeepEqual(data, c.data) {
			t.Errorf("%#v: %s %#v %v; want %s %#v", c.r, typ, data, err, c.typ, c.data)
		}
		if _, err := NewEvent(c.r, Write{At: time.Unix(1e9, 0), Actor: ckpt.Actor{Agent: "claude-code"}, Key: "k"}); err != nil {
			t.Errorf("%#v: the event does not encode: %v", c.r, err)
		}
		if _, _, err := c.refusing.Build(nil); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("%#v: built (%v), want invalid input", c.refusing, err)
		}
	}
}
