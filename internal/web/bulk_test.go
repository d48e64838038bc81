package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/bulk"
	"github.com/ckpt-dev/ckpt/memstore"
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

// TestBulkTenantNeedsAFilterOfItsOwn: for a visitor who reads only its
// prefix, that prefix narrows the selection but is not a filter it chose:
// a bulk request with no filter is refused, not run on the whole tenant.
func TestBulkTenantNeedsAFilterOfItsOwn(t *testing.T) {
	st := memstore.New()
	for _, id := range []string{"kai/a", "team/b"} {
		if _, err := st.Append(t.Context(), id, ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "seed"}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(Options{Store: st, Anonymous: Principal{Name: "kai", Write: true, Prefix: "kai", ReadPrefix: true}}))
	defer srv.Close()
	post := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/ui/api/bulk", strings.NewReader(body))
		req.Header.Set("Origin", srv.URL)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post(`{"action":"done","filters":{}}`); code != http.StatusBadRequest || !strings.Contains(body, "needs a filter") {
		t.Errorf("a tenant's bulk request with no filter: %d %s", code, body)
	}
	code, body := post(`{"action":"done","filters":{"q":"/"}}`)
	if code != http.StatusOK || !strings.Contains(body, `"id":"kai/a","outcome":"done"`) || strings.Contains(body, "team/b") {
		t.Errorf("a tenant's bulk done: %d %s, want kai/a done and team/b unseen", code, body)
	}
}
