package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/browsertest"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestBulkActionInChromium: on the overview filtered by a prefix, a bulk
// "mark done" is previewed with its count ("12 checkpoints will be marked
// done", the one done already left alone), then run on exactly those; a
// bulk tell reaches every agent the filter picks; the page passes axe with
// the preview open and does not scroll sideways at 390 px.
func TestBulkActionInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedFleet(t, st)
	seedBatch(t, st)
	ctx0 := context.Background()
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: time.Second}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")

	// A bulk tell first, to the 13 agents under batch/.
	browsertest.Run(t, ctx, "the filtered overview", chromedp.Navigate(srv.URL+"/?prefix=batch/"))
	browsertest.WaitFor(t, ctx, "the filtered rows", `document.querySelectorAll("#rows tr[data-id]").length === 13`)
	browsertest.Run(t, ctx, "previewing a bulk tell",
		chromedp.SetValue(`#bulk-action`, "tell", chromedp.ByID),
		chromedp.SendKeys(`#bulk-text`, "Stop at the next green test and commit", chromedp.ByID),
		chromedp.Click(`//button[text()="Preview"]`))
	browsertest.WaitFor(t, ctx, "the tell's preview", `document.getElementById("bulk-count")?.textContent === "13 checkpoints will be told your message."`)
	browsertest.Run(t, ctx, "telling", chromedp.Click(`#bulk-run`, chromedp.ByID))
	browsertest.WaitFor(t, ctx, "the tell's result", `document.getElementById("bulk-result")?.textContent === "13 told your message."`)
	for i := range 13 {
		c, _ := st.Get(ctx0, fmt.Sprintf("batch/%02d", i), 0)
		if len(c.Messages) != 1 || c.Messages[0].Text != "Stop at the next green test and commit" || c.Messages[0].From != "dashboard:admin" {
			t.Fatalf("batch/%02d's messages after the bulk tell: %+v", i, c.Messages)
		}
	}
	if c, _ := st.Get(ctx0, "loop/fix-tests", 0); len(c.Messages) != 0 {
		t.Errorf("loop/fix-tests, outside the filter, was told %+v", c.Messages)
	}

	// Mark done: the preview counts what will change and what is left alone.
	browsertest.Run(t, ctx, "previewing a bulk done",
		chromedp.SetValue(`#bulk-action`, "done", chromedp.ByID),
		chromedp.Click(`//button[text()="Preview"]`))
	browsertest.WaitFor(t, ctx, "the done's preview", `document.getElementById("bulk-count")?.textContent === "12 checkpoints will be marked done."`)
	if left := browsertest.Eval[string](t, ctx, `document.getElementById("bulk-preview").textContent`); !strings.Contains(left, "1 picked by the filters will be left alone: 1 skipped (is done already)") || !strings.Contains(left, "batch/00, batch/01") {
		t.Errorf("the preview reads %q", left)
	}
	browsertest.Screenshot(t, ctx, "bulk-preview")
	checkAxe(t, ctx, "the overview with a bulk preview")
	checkAccessibleNames(t, ctx)
	// A write between the preview and the run: batch/05 is done by its
	// agent, so the run skips it and does the 11 others.
	if _, err := st.Append(ctx0, "batch/05", ckpt.MustEvent(ckpt.EventStatus, time.Now(), ckpt.Actor{Agent: "worker-5"}, ckpt.StatusChange{Status: ckpt.StatusDone}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.Run(t, ctx, "marking done", chromedp.Click(`#bulk-run`, chromedp.ByID))
	browsertest.WaitFor(t, ctx, "the done's result", `document.getElementById("bulk-result")?.textContent === "11 marked done, 1 skipped."`)
	for i := range 13 {
		if c, _ := st.Get(ctx0, fmt.Sprintf("batch/%02d", i), 0); c.Status != ckpt.StatusDone {
			t.Errorf("batch/%02d is %s after the bulk done", i, c.Status)
		}
	}
	if c, _ := st.Get(ctx0, "kai-7/spec", 0); c.Status != ckpt.StatusInProgress {
		t.Errorf("kai-7/spec, outside the filter, is %s", c.Status)
	}
	browsertest.Screenshot(t, ctx, "bulk-result")

	// Without a filter the server refuses: a whole fleet is never acted on by accident.
	browsertest.Run(t, ctx, "no filter", chromedp.Navigate(srv.URL+"/"))
	browsertest.WaitFor(t, ctx, "the overview", `document.getElementById("bulk-form") !== null`)
	browsertest.Run(t, ctx, "previewing with no filter", chromedp.SetValue(`#bulk-action`, "done", chromedp.ByID), chromedp.Click(`//button[text()="Preview"]`))
	browsertest.WaitFor(t, ctx, "the refusal", `(document.querySelector("#bulk-preview .error")?.textContent || "").includes("needs a filter")`)

	browsertest.Run(t, ctx, "a phone screen", chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/?prefix=batch/"))
	browsertest.WaitFor(t, ctx, "the bulk form on a phone", `document.getElementById("bulk-form") !== null`)
	browsertest.Run(t, ctx, "previewing on a phone", chromedp.SetValue(`#bulk-action`, "archive", chromedp.ByID), chromedp.Click(`//button[text()="Preview"]`))
	browsertest.WaitFor(t, ctx, "the archive's preview", `document.getElementById("bulk-count")?.textContent === "13 checkpoints will be archived."`)
	if w := browsertest.Eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("on a 390 px wide screen the page with a bulk preview is %v px wide", w)
	}
}

// seedBatch adds batch/00 … batch/12, the last done, the others working,
// each with an agent of its own.
func seedBatch(t *testing.T, st ckpt.Store) {
	t.Helper()
	at := time.Now().Add(-10 * time.Minute)
	for i := range 13 {
		status := ckpt.StatusInProgress
		if i == 12 {
			status = ckpt.StatusDone
		}
		c := ckpt.Created{Patch: ckpt.Patch{Title: ptr("nightly shard"), Status: &status, Agent: &ckpt.Agent{ID: fmt.Sprintf("worker-%d", i)}}}
		if _, err := st.Append(context.Background(), fmt.Sprintf("batch/%02d", i), ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, c), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
