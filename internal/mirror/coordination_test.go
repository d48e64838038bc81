package mirror

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
)

// TestAgentFileRecordsTheInboxCheck: seed 002's coordination_state says
// when the agent last checked its inbox: ckpt writes last_inbox_check when
// it delivers the agent's messages into its context, unread_messages the
// messages told and not yet delivered; later changes keep the time, and a
// file written anew (a mirror added later, a file deleted) takes it from
// the history.
func TestAgentFileRecordsTheInboxCheck(t *testing.T) {
	env, m := newMirrorEnv(t, Entry{Format: agentcheckpoints.Name, Root: ".", Prefix: "kai-7/"})
	ctx := context.Background()
	id := "kai-7/secondary_a"
	appendAt := func(typ ckpt.EventType, minute int, data any) {
		t.Helper()
		if _, err := m.Append(ctx, id, ckpt.MustEvent(typ, t0.Add(time.Duration(minute)*time.Minute), ckpt.Actor{Agent: "Agent-Primary"}, data), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	appendAt(ckpt.EventCreated, 0, agentStart(id, "Secondary-A").Data)
	file := env.path(agentcheckpoints.Dir, "secondary_a.json")
	coordination := func() string {
		t.Helper()
		data := read(t, file)
		i := strings.Index(data, `"coordination_state"`)
		if i < 0 {
			t.Fatalf("no coordination_state:\n%s", data)
		}
		return strings.Join(strings.Fields(data[i:]), " ")
	}
	if got := coordination(); strings.Contains(got, "last_inbox_check") || !strings.Contains(got, `"unread_messages": 0`) {
		t.Errorf("before any message: %s", got)
	}
	appendAt(ckpt.EventTold, 1, ckpt.Tell{Text: "Please update your checkpoint"})
	if got := coordination(); !strings.Contains(got, `"unread_messages": 1`) {
		t.Errorf("a message told and not delivered: %s", got)
	}
	appendAt(ckpt.EventDelivered, 2, ckpt.Delivery{IDs: []string{"m2"}, Via: "claude-code Stop"})
	want := `"last_inbox_check": "2026-01-15T14:32:00Z", "unread_messages": 0,`
	if got := coordination(); !strings.Contains(got, want) {
		t.Errorf("after the delivery: %s, want %s", got, want)
	}
	appendAt(ckpt.EventNote, 3, ckpt.Note{Text: "later work"})
	if got := coordination(); !strings.Contains(got, want) {
		t.Errorf("a later change lost the inbox check: %s", got)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.SyncAll(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := coordination(); !strings.Contains(got, want) {
		t.Errorf("a file written anew: %s, want the history's last delivery", got)
	}
}
