package mcp

import (
	"testing"

	"github.com/ckpt-dev/ckpt/internal/bulk"
)

// TestBulkTell: an orchestrator previews, then briefs every worker under
// its prefix at once; each worker's checkpoint holds the message from it,
// and a request with no filter is refused.
func TestBulkTell(t *testing.T) {
	f := connect(t)
	for _, id := range []string{"kai-7/worker-1", "kai-7/worker-2", "other/x"} {
		ok[StateOutput](t, f, "ckpt_start", map[string]any{"id": id, "interval": "1h"})
	}
	args := map[string]any{"action": "tell", "prefix": "kai-7/", "text": "freeze the schema at v2", "agent": "orchestrator", "dry_run": true}
	pre := ok[bulk.Result](t, f, "ckpt_bulk", args)
	if pre.Counts[bulk.Will] != 2 || len(pre.Items) != 2 || f.get(t, "kai-7/worker-1").Messages != nil {
		t.Fatalf("dry run %+v", pre)
	}
	delete(args, "dry_run")
	got := ok[bulk.Result](t, f, "ckpt_bulk", args)
	if got.Counts[bulk.Applied] != 2 {
		t.Fatalf("run %+v", got)
	}
	for _, id := range []string{"kai-7/worker-1", "kai-7/worker-2"} {
		if m := f.get(t, id).Messages; len(m) != 1 || m[0].From != "orchestrator" || m[0].Text != "freeze the schema at v2" {
			t.Errorf("%s's messages %+v", id, m)
		}
	}
	if m := f.get(t, "other/x").Messages; len(m) != 0 {
		t.Errorf("other/x, outside the prefix, was told %+v", m)
	}
	fails(t, f, "ckpt_bulk", map[string]any{"action": "done"}, "needs a filter")
}
