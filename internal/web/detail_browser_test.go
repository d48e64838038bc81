package web

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/browsertest"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestCheckpointFamilyAndRevisionPreview: a checkpoint's page links its
// parent and its children both ways; a revision is previewed (its state,
// and what a restore changes, field by field) before it is restored, the
// preview stays open across a redraw, and the restore brings that state
// back; axe finds nothing on the page with the preview open.
func TestCheckpointFamilyAndRevisionPreview(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedFleet(t, st)
	seedFamily(t, st)
	ctx0 := context.Background()
	update := func(step string) {
		t.Helper()
		e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "secondary-a"}, ckpt.Patch{CurrentStep: ptr(step)})
		if _, err := st.Append(ctx0, "kai-7/spec", e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update("Drafting the checklist")
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: time.Second}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")

	browsertest.Run(t, ctx, "the checkpoint page", chromedp.Navigate(srv.URL+"/c/kai-7/spec"))
	browsertest.WaitFor(t, ctx, "the parent and the child", `document.querySelector('#parent-link a[href="/c/kai-7"]') && document.querySelector('#children a[href="/c/kai-7/spec/research"]')`)
	// Both ways: the parent's page lists this checkpoint among its children.
	browsertest.Run(t, ctx, "following the parent link", chromedp.Click(`#parent-link a`))
	browsertest.WaitFor(t, ctx, "the parent's page", `location.pathname === "/c/kai-7" && document.querySelectorAll("#children li").length === 2`)
	if kids := browsertest.Eval[string](t, ctx, `document.getElementById("children").textContent`); !strings.Contains(kids, "kai-7/api") || !strings.Contains(kids, "kai-7/spec") || !strings.Contains(kids, "blocked") {
		t.Errorf("the parent's children read %q, want kai-7/api (blocked) and kai-7/spec", kids)
	}
	browsertest.Run(t, ctx, "following a child link", chromedp.Click(`#children a[href="/c/kai-7/spec"]`))
	browsertest.WaitFor(t, ctx, "the child's page", `location.pathname === "/c/kai-7/spec" && document.querySelectorAll("#timeline li").length === 6`)

	// Preview revision 1: the steps not started, the first current step.
	browsertest.Run(t, ctx, "previewing revision 1", chromedp.Click(`button[aria-label="Preview revision 1"]`))
	browsertest.WaitFor(t, ctx, "the preview", `document.querySelectorAll("#preview-changes tbody tr").length > 0`)
	changes := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#preview-changes tbody tr")].map((tr) => [...tr.children].map((c) => c.textContent).join(" | "))`)
	for _, want := range []string{"current_step | Drafting the checklist | Writing acceptance criteria", "steps[research].status | done | pending", "code.branch | feat/schedule | (none)"} {
		if !contains(changes, want) {
			t.Errorf("the preview's changes %q lack %q", changes, want)
		}
	}
	if head := browsertest.Eval[string](t, ctx, `document.getElementById("revision-preview").textContent`); !strings.Contains(head, "Revision 1 of 6") || !strings.Contains(head, "Writing acceptance criteria") {
		t.Errorf("the preview reads %q, want revision 1's state", head)
	}
	// A write while it is open: the preview stays, against the new now.
	update("Reviewing")
	browsertest.WaitFor(t, ctx, "the preview after the redraw", `document.querySelector(".meta").textContent.includes("revision 7") &&
	  [...document.querySelectorAll("#preview-changes tbody tr")].some((tr) => tr.textContent.startsWith("current_stepReviewing"))`)
	browsertest.Screenshot(t, ctx, "revision-preview")
	checkAxe(t, ctx, "a checkpoint page with a revision preview")
	checkAccessibleNames(t, ctx)

	browsertest.Run(t, ctx, "restoring revision 1", chromedp.Click(`//button[text()="Restore revision 1"]`))
	browsertest.WaitFor(t, ctx, "the restored page", `document.querySelector(".meta").textContent.includes("revision 8") && document.getElementById("revision-preview").hidden`)
	c, err := st.Get(ctx0, "kai-7/spec", 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.CurrentStep != "Writing acceptance criteria" || c.Steps[0].Status != ckpt.StepPending || c.Code != nil {
		t.Errorf("after restoring revision 1: current step %q, research %s, code %+v", c.CurrentStep, c.Steps[0].Status, c.Code)
	}

	// The checkpoint turning blocked while its page is open is announced.
	if _, err := st.Append(ctx0, "kai-7/spec", ckpt.MustEvent(ckpt.EventBlocker, time.Now(), ckpt.Actor{Agent: "secondary-a"}, ckpt.BlockerChange{Text: "needs the API key"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the announcement on the checkpoint's page", `document.getElementById("announce").textContent.startsWith("kai-7/spec is now blocked")`)

	// A parent that is only a group name links to its checkpoints.
	browsertest.Eval[bool](t, ctx, `history.pushState(null, "", "/c/solo/x"); dispatchEvent(new PopStateEvent("popstate")); true`)
	browsertest.WaitFor(t, ctx, "the group's link", `document.querySelector('#parent-link a')?.getAttribute("href") === "/?parent=epic-9"`)
}

// seedFamily adds to seedFleet the plan kai-7 as a checkpoint, a child of
// kai-7/spec, and solo/x whose parent epic-9 is only a group name.
func seedFamily(t *testing.T, st ckpt.Store) {
	t.Helper()
	at := time.Now().Add(-20 * time.Minute)
	for _, c := range []struct{ id, parent, title string }{{"kai-7", "", "The kai-7 plan"}, {"kai-7/spec/research", "kai-7/spec", "Read the old fetcher"}, {"solo/x", "epic-9", "Part of an epic"}} {
		p := ckpt.Patch{Title: ptr(c.title), Agent: &ckpt.Agent{ID: "lead"}}
		if c.parent != "" {
			p.Parent = ptr(c.parent)
		}
		if _, err := st.Append(context.Background(), c.id, ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, ckpt.Created{Patch: p}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
