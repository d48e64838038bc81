package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
)

// bulkPost posts a bulk request as the page does (with the CSRF header
// unless csrf is false) and returns the status and the result.
func (f *fixture) bulkPost(c *http.Client, body map[string]any, csrf bool) (int, bulk.Result) {
	f.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/ui/api/bulk", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.srv.URL)
	if csrf {
		req.Header.Set(csrfHeader, f.csrf(c))
	}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var out bulk.Result
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestBulkFromThePage: the page's bulk action previews the filtered set,
// then acts on the previewed IDs within the visitor's scope; a request
// without the CSRF value, or from a read token, is refused.
func TestBulkFromThePage(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{"kai/a", "kai/b", "team/c"} {
		f.create(id, ckpt.Patch{Title: ptr("job " + id)})
	}
	admin, kai, reader := f.client("admin-secret"), f.client("kai-secret"), f.client("read-secret")
	preview := map[string]any{"action": "done", "filters": map[string]string{"q": "job"}, "dry_run": true}
	if status, _ := f.bulkPost(admin, preview, false); status != http.StatusForbidden {
		t.Errorf("a bulk request without the page's CSRF value: %d, want 403", status)
	}
	if status, _ := f.bulkPost(reader, preview, true); status != http.StatusForbidden {
		t.Errorf("a bulk request from a read token: %d, want 403", status)
	}
	status, pre := f.bulkPost(kai, preview, true)
	if status != http.StatusOK || pre.Counts[bulk.Will] != 2 || pre.Counts[bulk.Forbidden] != 1 {
		t.Fatalf("kai's preview: %d %+v", status, pre)
	}
	var ids []string
	for _, it := range pre.Items {
		if it.Outcome == bulk.Will {
			ids = append(ids, it.ID)
		}
	}
	run := map[string]any{"action": "done", "filters": map[string]string{"q": "job"}, "ids": ids}
	status, got := f.bulkPost(kai, run, true)
	if status != http.StatusOK || got.Counts[bulk.Applied] != 2 || len(got.Items) != 2 {
		t.Fatalf("kai's run: %d %+v", status, got)
	}
	for id, want := range map[string]ckpt.Status{"kai/a": ckpt.StatusDone, "kai/b": ckpt.StatusDone, "team/c": ckpt.StatusInProgress} {
		c, err := f.store.Get(t.Context(), id, 0)
		if err != nil || c.Status != want {
			t.Errorf("%s after kai's bulk done: %v %v, want %s", id, c.Status, err, want)
		}
	}
	h, _ := f.store.History(t.Context(), "kai/a", 1, 10)
	if last := h[len(h)-1]; last.Actor.Agent != "kai-bot" {
		t.Errorf("the bulk action was recorded as %q, want the token's agent kai-bot", last.Actor.Agent)
	}
}
