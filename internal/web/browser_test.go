package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/browsertest"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/memstore"
)

// seedFleet writes what an agent fleet would: a plan with steps, a
// blocked agent, one waiting for a person, finished work.
func seedFleet(t *testing.T, st ckpt.Store) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().Add(-30 * time.Minute)
	add := func(id string, c ckpt.Created, more ...ckpt.Event) {
		if c.Status == nil {
			c.Status = ptr(ckpt.StatusInProgress)
		}
		e := ckpt.MustEvent(ckpt.EventCreated, now, ckpt.Actor{Agent: "seed"}, c)
		if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, e := range more {
			if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	step := func(id string, s ckpt.StepStatus, at time.Time) ckpt.Event {
		return ckpt.MustEvent(ckpt.EventStep, at, ckpt.Actor{Agent: "seed"}, ckpt.StepChange{ID: id, Status: s})
	}
	add("kai-7/spec", ckpt.Created{Patch: ckpt.Patch{Title: ptr("Schedule fetcher spec"), Agent: &ckpt.Agent{ID: "secondary-a", Name: "Secondary-A"}, Parent: ptr("kai-7"),
		CurrentStep: ptr("Writing acceptance criteria")}, Steps: []ckpt.Step{{ID: "research"}, {ID: "spec"}, {ID: "checklist"}}},
		step("research", ckpt.StepInProgress, now), step("research", ckpt.StepDone, now.Add(10*time.Minute)), step("spec", ckpt.StepInProgress, now.Add(11*time.Minute)),
		ckpt.MustEvent(ckpt.EventCode, now.Add(12*time.Minute), ckpt.Actor{Agent: "seed"}, ckpt.CodeState{Root: "/work/fetcher", Host: "laptop",
			Branch: "feat/schedule", Head: "3f2a9c1d0e4b5a6978877665544332211aabbccd", Upstream: "origin/feat/schedule", Ahead: 2, Uncommitted: 3, At: now.Add(12 * time.Minute)}))
	add("kai-7/api", ckpt.Created{Patch: ckpt.Patch{Title: ptr("API client"), Agent: &ckpt.Agent{ID: "secondary-b", Name: "Secondary-B"}, Parent: ptr("kai-7"), Status: ptr(ckpt.StatusBlocked)}},
		ckpt.MustEvent(ckpt.EventBlocker, now, ckpt.Actor{Agent: "seed"}, ckpt.BlockerChange{ID: "b1", Text: "Waiting for DISCOVERY.md"}))
	add("loop/fix-tests", ckpt.Created{Patch: ckpt.Patch{Title: ptr("Fix flaky tests"), Agent: &ckpt.Agent{ID: "claude-1", Name: "claude-1"}}})
	add("done/docs", ckpt.Created{Patch: ckpt.Patch{Title: ptr("Write docs"), Agent: &ckpt.Agent{ID: "claude-2"}, Status: ptr(ckpt.StatusDone)}})
	if err := st.Beat(ctx, "loop/fix-tests", ckpt.Signal{State: ckpt.PresenceWaiting, Reason: "permission prompt"}); err != nil {
		t.Fatal(err)
	}
}

func TestDashboardInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedFleet(t, st)
	// A real agent process, busy in a long tool call, to be killed.
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	sig := ckpt.Signal{State: ckpt.PresenceBusy, Reason: "Bash", Process: process.Of(agent.Process.Pid)}
	if err := st.Beat(context.Background(), "kai-7/spec", sig); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: time.Second,
		Alive: process.Alive, PresenceEvery: 200 * time.Millisecond}))
	t.Cleanup(srv.Close) // after the browser's cleanup: its event stream ends first
	ctx := browsertest.New(t)

	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")
	browsertest.WaitFor(t, ctx, "the rows the store holds", `document.querySelectorAll("#rows tr[data-id]").length === 4`)
	browsertest.WaitFor(t, ctx, "the live feed", `document.getElementById("live").textContent === "live"`)
	counts := browsertest.Eval[string](t, ctx, `document.getElementById("counts").textContent`)
	if !strings.HasPrefix(counts, "1 waiting for you") {
		t.Errorf("counts %q: want waiting first", counts)
	}
	if got := browsertest.Eval[string](t, ctx, `document.querySelector('tr[data-id="kai-7/api"]').textContent`); !strings.Contains(got, "1 blocker") {
		t.Errorf("the blocked row does not call out its blocker: %q", got)
	}
	browsertest.Screenshot(t, ctx, "overview")

	// A write from elsewhere appears without a reload.
	marker := browsertest.Eval[float64](t, ctx, `window.__marker = Math.random()`)
	e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "secondary-a"}, ckpt.Patch{CurrentStep: ptr("Drafting the checklist")})
	if _, err := st.Append(context.Background(), "kai-7/spec", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the live update", `document.querySelector('tr[data-id="kai-7/spec"]').textContent.includes("Drafting the checklist")`)
	if got := browsertest.Eval[float64](t, ctx, `window.__marker`); got != marker {
		t.Error("the page reloaded to show the update")
	}

	// The agent's process is killed: with nothing written, the row turns dead.
	if err := st.Beat(context.Background(), "kai-7/spec", sig); err != nil { // busy again after the update
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the busy agent", `document.querySelector('tr[data-id="kai-7/spec"] .badge')?.textContent === "busy"`)
	if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the killed agent seen dead", `document.querySelector('tr[data-id="kai-7/spec"] .badge')?.textContent === "dead"`)
	browsertest.Screenshot(t, ctx, "overview-dead")

	// On a phone, in the dark: the rows become cards and nothing overflows.
	browsertest.Run(t, ctx, "a dark phone screen",
		chromedp.EmulateViewport(390, 844),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
		chromedp.Navigate(srv.URL+"/"))
	browsertest.WaitFor(t, ctx, "the rows on a phone", `document.querySelectorAll("#rows tr[data-id]").length === 4`)
	if w := browsertest.Eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("on a 390 px wide screen the page is %v px wide", w)
	}
	if bg := browsertest.Eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(13, 17, 23)" {
		t.Errorf("dark scheme background %s, want the dark theme's", bg)
	}
	browsertest.Screenshot(t, ctx, "overview-phone-dark")
	browsertest.Run(t, ctx, "back to a laptop screen", chromedp.EmulateViewport(1280, 900),
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}))

	// A filter in the URL narrows the list.
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/?parent=kai-7")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the filtered list", `document.querySelectorAll("#rows tr[data-id]").length === 2`)

	checkAccessibleNames(t, ctx)
	checkKeyboard(t, ctx, srv.URL)

	// The checkpoint page, and a takeover from it.
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/c/kai-7/spec")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the checkpoint page", `document.querySelectorAll("#timeline li").length === 6`)
	if code := browsertest.Eval[string](t, ctx, `document.querySelector('section[aria-label="Code"]').textContent`); !strings.Contains(code, "feat/schedule") || !strings.Contains(code, "3f2a9c1d0e4b") {
		t.Errorf("the code card says %q, want the branch and commit", code)
	}
	// The page says why it is dead, as ckpt why does: the rule, the process.
	if why := browsertest.Eval[string](t, ctx, `document.querySelector('section[aria-label="Why dead"]')?.textContent ?? ""`); !strings.Contains(why, "10: the bound process is gone") ||
		!strings.Contains(why, fmt.Sprintf("%d on ", agent.Process.Pid)) || !strings.Contains(why, "What changes it") {
		t.Errorf("the why card says %q, want the rule, the process and what changes it", why)
	}
	if why := browsertest.Eval[string](t, ctx, `document.getElementById("why").textContent`); regexp.MustCompile(`T\d\d:\d\d:\d\d|\.\d{4}`).MatchString(why) || !strings.Contains(why, " ago (") {
		t.Errorf("the why card says %q: want times as a person reads them (10 min ago (2026-01-15 14:30:05 UTC)), not raw RFC 3339", why)
	}
	browsertest.Screenshot(t, ctx, "checkpoint")
	checkAccessibleNames(t, ctx)
	err := chromedp.Run(ctx,
		chromedp.SendKeys(`input[name="agent"]`, "Secondary-C"),
		chromedp.Click(`//button[text()="Take over"]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the takeover", `document.querySelector(".meta").textContent.includes("agent Secondary-C")`)
	c, _ := st.Get(context.Background(), "kai-7/spec", 0)
	all, _ := ckpt.ListAll(context.Background(), st, ckpt.Filter{IncludeArchived: true, Prefix: "kai-7/spec_crashed_"})
	if c.Agent.Name != "Secondary-C" || len(all) != 1 || all[0].Agent.Name != "Secondary-A" {
		t.Errorf("after the page's takeover: agent %+v, archives %+v", c.Agent, all)
	}
}

func TestDashboardReadTokenCannotAct(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedFleet(t, st)
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "read-secret")
	browsertest.WaitFor(t, ctx, "the overview", `document.querySelectorAll("#rows tr[data-id]").length === 4`)
	if bulk := browsertest.Eval[bool](t, ctx, `document.getElementById("bulk-form") !== null`); bulk {
		t.Error("a read token sees the bulk action form")
	}
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/c/kai-7/api")); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the checkpoint page", `document.querySelector(".detail h1") !== null`)
	buttons := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("main button")].map(b => b.textContent)`)
	for _, b := range buttons {
		if b == "Take over" || b == "Mark abandoned" || b == "Clear blocker" || b == "Add note" || b == "Restore" {
			t.Errorf("a read token sees the %q button", b)
		}
	}
	if who := browsertest.Eval[string](t, ctx, `document.getElementById("who").textContent`); !strings.Contains(who, "read only") {
		t.Errorf("the header says %q, want read only", who)
	}
}

// checkAccessibleNames fails for any control or image without a name a
// screen reader could speak.
func checkAccessibleNames(t *testing.T, ctx context.Context) {
	t.Helper()
	if unnamed := browsertest.UnnamedControls(t, ctx); len(unnamed) > 0 {
		t.Errorf("controls without an accessible name: %v", unnamed)
	}
}

// checkKeyboard tabs to a checkpoint's link and opens it with Enter.
func checkKeyboard(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(`#rows`, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "rows", `document.querySelectorAll("#rows tr[data-id]").length > 0`)
	for i := 0; i < 40; i++ {
		if err := chromedp.Run(ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		href := browsertest.Eval[string](t, ctx, `document.activeElement.getAttribute("href") || ""`)
		if strings.HasPrefix(href, "/c/") {
			if err := chromedp.Run(ctx, chromedp.KeyEvent("\r")); err != nil {
				t.Fatal(err)
			}
			browsertest.WaitFor(t, ctx, "the page opened from the keyboard", fmt.Sprintf(`location.pathname === %q && document.querySelector(".detail h1") !== null`, href))
			return
		}
	}
	t.Error("40 presses of Tab never reached a checkpoint's link")
}
