package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// TestBulkOverTheAPI: POST /v1/bulk previews and then runs one action on
// every checkpoint a filter picks, in one request, within the token's
// grant: a read token is refused, a prefix token's checkpoints outside its
// prefix are reported forbidden and left alone, the agent-bound token's
// agent is the sender, and every checkpoint's outcome is reported.
func TestBulkOverTheAPI(t *testing.T) {
	f := newFixture(t, server.Options{})
	ctx := context.Background()
	for _, id := range []string{"kai-7/a", "kai-7/b", "team/c"} {
		if _, err := f.store.Append(ctx, id, created(id), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	read := f.token(t, server.ScopeRead, "", "")
	body := `{"action":"tell","filter":{"q":"/"},"text":"wrap up","dry_run":true}`
	if code, out := post(t, f, read, "/v1/bulk", body); code != http.StatusForbidden {
		t.Errorf("a read token's bulk request: %d %s", code, out)
	}
	lead := f.token(t, server.ScopeWrite, "kai-7/", "kai-lead")
	code, out := post(t, f, lead, "/v1/bulk", body)
	var pre bulk.Result
	if code != http.StatusOK || json.Unmarshal([]byte(out), &pre) != nil || pre.Counts[bulk.Will] != 2 || pre.Counts[bulk.Forbidden] != 1 {
		t.Fatalf("preview: %d %s", code, out)
	}
	code, out = post(t, f, lead, "/v1/bulk", strings.Replace(body, `,"dry_run":true`, `,"from":"forged"`, 1))
	var got bulk.Result
	if code != http.StatusOK || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("run: %d %s", code, out)
	}
	want := map[string]string{"kai-7/a": bulk.Applied, "kai-7/b": bulk.Applied, "team/c": bulk.Forbidden}
	for _, it := range got.Items {
		if want[it.ID] != it.Outcome {
			t.Errorf("%s: %s (%s), want %s", it.ID, it.Outcome, it.Reason, want[it.ID])
		}
	}
	for id, n := range map[string]int{"kai-7/a": 1, "kai-7/b": 1, "team/c": 0} {
		c, _ := f.store.Get(ctx, id, 0)
		if len(c.Messages) != n || n == 1 && c.Messages[0].From != "kai-lead" {
			t.Errorf("%s's messages %+v, want %d from kai-lead", id, c.Messages, n)
		}
	}
	if code, out := post(t, f, lead, "/v1/bulk", `{"action":"done","filter":{}}`); code != http.StatusBadRequest || !strings.Contains(out, "needs a filter") {
		t.Errorf("a bulk request with no filter: %d %s", code, out)
	}
}
