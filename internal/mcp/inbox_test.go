package mcp

import (
	"testing"
	"time"
)

// TestTellAndInbox: an orchestrator lists what needs a person and briefs a
// worker; the message waits in the worker's checkpoint, named by its sender.
func TestTellAndInbox(t *testing.T) {
	f := connect(t)
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "kai-7/worker-1", "interval": "1h"})
	ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": "kai-7/worker-2", "interval": "1h"})
	ok[StateOutput](t, f, "ckpt_blocker", map[string]any{"id": "kai-7/worker-2", "text": "which schema?"})
	f.clock.Set(t0.Add(5 * time.Minute))
	box := ok[InboxOutput](t, f, "ckpt_inbox", map[string]any{})
	if box.Count != 1 || box.Items[0].ID != "kai-7/worker-2" || box.Items[0].State != "blocked" || box.Items[0].Reason != "b1: which schema?" || box.Items[0].AgeSeconds != 300 {
		t.Fatalf("inbox %+v", box)
	}
	out := ok[StateOutput](t, f, "ckpt_tell", map[string]any{"id": "kai-7/worker-2", "text": "use schema v2", "agent": "orchestrator"})
	c := f.get(t, "kai-7/worker-2")
	if out.Rev != 3 || len(c.Messages) != 1 || c.Messages[0].From != "orchestrator" || c.Messages[0].Text != "use schema v2" {
		t.Fatalf("after ckpt_tell: rev %d, messages %+v", out.Rev, c.Messages)
	}
	fails(t, f, "ckpt_tell", map[string]any{"id": "kai-7/worker-2", "text": " "}, "the message is empty")
	fails(t, f, "ckpt_tell", map[string]any{"id": "kai-7/nobody", "text": "hi"}, "not found")
}
