package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/browsertest"
	"github.com/ckpt-dev/ckpt/internal/claude"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/memstore"
)

// seedAttention adds to seedFleet what needs a person besides the waiting
// and the blocked agent: a dead one (its process killed), a stale one and
// failed work; kill kills the dead one's process.
func seedAttention(t *testing.T, st ckpt.Store) {
	t.Helper()
	ctx := context.Background()
	seedFleet(t, st)
	add := func(id string, at time.Time, p ckpt.Patch, more ...ckpt.Event) {
		if _, err := st.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, ckpt.Created{Patch: p}), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, e := range more {
			if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	old := time.Now().Add(-3 * time.Hour)
	add("ops/stale", old, ckpt.Patch{Title: ptr("Nightly import"), Agent: &ckpt.Agent{ID: "importer"}, Interval: ptr(ckpt.Duration(10 * time.Minute))})
	add("ops/failed", old, ckpt.Patch{Title: ptr("Migrate the schema")},
		ckpt.MustEvent(ckpt.EventStatus, old.Add(time.Minute), ckpt.Actor{Agent: "seed"}, ckpt.StatusChange{Status: ckpt.StatusFailed, Reason: "upstream API removed"}))
	add("ops/dead", time.Now().Add(-time.Minute), ckpt.Patch{Title: ptr("Build images"), Agent: &ckpt.Agent{ID: "builder"}})
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	if err := st.Beat(ctx, "ops/dead", ckpt.Signal{State: ckpt.PresenceBusy, Reason: "docker build", Process: process.Of(agent.Process.Pid)}); err != nil {
		t.Fatal(err)
	}
	agent.Process.Signal(syscall.SIGKILL)
	agent.Wait()
}

// TestInboxInChromium: the dashboard opens on what needs a person, most
// urgent first, with reasons in the rows and a count per state; a reply
// typed there reaches the agent's next hook; an update redraws the inbox
// in place without losing what is being typed; the prefix filter
// round-trips through the URL; nothing scrolls sideways at 390 px.
func TestInboxInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedAttention(t, st)
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: time.Second,
		Alive: process.Alive, PresenceEvery: 200 * time.Millisecond}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")
	browsertest.WaitFor(t, ctx, "the inbox", `document.querySelectorAll("#inbox li").length === 5`)
	order := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#inbox li")].map(li => li.querySelector(".badge").textContent + " " + li.dataset.id)`)
	want := []string{"waiting loop/fix-tests", "blocked kai-7/api", "dead ops/dead", "stale ops/stale", "failed ops/failed"}
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("inbox order %v, want %v", order, want)
	}
	if first := browsertest.Eval[float64](t, ctx, `document.getElementById("inbox-section").getBoundingClientRect().top`); first > 200 {
		t.Errorf("the inbox starts %v px down: it must open the page", first)
	}
	reasons := browsertest.Eval[string](t, ctx, `document.getElementById("inbox").textContent`)
	for _, r := range []string{"permission prompt", "b1: Waiting for DISCOVERY.md", "is gone", "silent for more than 40m", "upstream API removed"} {
		if !strings.Contains(reasons, r) {
			t.Errorf("the inbox does not show the reason %q: %s", r, reasons)
		}
	}
	if c := browsertest.Eval[string](t, ctx, `document.getElementById("inbox-counts").textContent`); c != "1 waiting1 blocked1 dead1 stale1 failed" {
		t.Errorf("inbox counts %q", c)
	}
	colours := browsertest.Eval[[]string](t, ctx, `["waiting","blocked","dead","stale","failed"].map(s => getComputedStyle(document.querySelector("#inbox .p-" + s)).color)`)
	seen := map[string]bool{}
	for _, c := range colours {
		seen[c] = true
	}
	if len(seen) != 5 {
		t.Errorf("the five states share colours: %v", colours)
	}
	rows := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("#rows tr[data-id]")].map(tr => tr.dataset.id)`)
	if want := "loop/fix-tests ops/dead ops/stale ops/failed done/docs kai-7/api kai-7/spec"; strings.Join(rows, " ") != want {
		t.Errorf("the fleet's rows %v, want attention first in each group: %s", rows, want)
	}
	browsertest.Screenshot(t, ctx, "inbox")
	checkAxe(t, ctx, "the overview")

	// Typing a reply to the blocked agent while the fleet changes: the
	// inbox updates in place and keeps the text and the focus.
	browsertest.Run(t, ctx, "typing a reply", chromedp.Click(`li[data-id="kai-7/api"] textarea`), chromedp.SendKeys(`li[data-id="kai-7/api"] textarea`, "half a thought"))
	if _, err := st.Append(context.Background(), "kai-7/spec", ckpt.MustEvent(ckpt.EventBlocker, time.Now(), ckpt.Actor{Agent: "secondary-a"}, ckpt.BlockerChange{Text: "needs the API key"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the new blocked agent in the inbox", `document.querySelectorAll("#inbox li").length === 6`)
	if v := browsertest.Eval[string](t, ctx, `document.querySelector('li[data-id="kai-7/api"] textarea').value`); v != "half a thought" {
		t.Errorf("the reply being typed is %q after an update", v)
	}
	if f := browsertest.Eval[string](t, ctx, `document.activeElement.closest("li")?.dataset.id || ""`); f != "kai-7/api" {
		t.Errorf("the focus moved to %q after an update", f)
	}

	// A reply to the waiting agent reaches its next hook.
	browsertest.Run(t, ctx, "replying", chromedp.SendKeys(`li[data-id="loop/fix-tests"] textarea`, "Yes, run the migration"),
		chromedp.Click(`li[data-id="loop/fix-tests"] button`))
	browsertest.WaitFor(t, ctx, "the reply announced", `document.getElementById("inbox-announce").textContent.startsWith("Message sent to loop/fix-tests")`)
	browsertest.WaitFor(t, ctx, "the reply pending", `document.querySelector('li[data-id="loop/fix-tests"] .inbox-pending').textContent.startsWith("1 message")`)
	hk := &claude.Handler{Store: st, Getenv: func(k string) string { return map[string]string{"CKPT_ID": "loop/fix-tests"}[k] }}
	in, err := claude.ParseInput(strings.NewReader(`{"session_id":"s9","hook_event_name":"Stop","last_assistant_message":"May I run the migration?"}`))
	if err != nil {
		t.Fatal(err)
	}
	res := hk.Handle(context.Background(), claude.EventStop, in)
	var block struct{ Decision, Reason string }
	if json.Unmarshal(res.Output, &block) != nil || block.Decision != "block" || !strings.Contains(block.Reason, "from dashboard:admin") || !strings.Contains(block.Reason, "> Yes, run the migration") {
		t.Fatalf("the Stop hook after a reply printed %s (warnings %v)", res.Output, res.Warnings)
	}

	// The prefix filter round-trips through the URL and narrows both lists.
	browsertest.Run(t, ctx, "a prefix in the URL", chromedp.Navigate(srv.URL+"/?prefix=ops/"))
	browsertest.WaitFor(t, ctx, "the filtered inbox", `document.querySelectorAll("#inbox li").length === 3 && document.querySelectorAll("#rows tr[data-id]").length === 3`)
	if v := browsertest.Eval[string](t, ctx, `document.querySelector('input[name="prefix"]').value`); v != "ops/" {
		t.Errorf("the prefix field shows %q", v)
	}
	browsertest.Run(t, ctx, "a filter from the form", chromedp.SetValue(`input[name="prefix"]`, "kai-7/"), chromedp.Click(`//button[text()="Filter"]`))
	browsertest.WaitFor(t, ctx, "the form's filter in the URL", `location.search === "?prefix=kai-7%2F" && document.querySelectorAll("#inbox li").length === 2`)

	// On a phone: nothing scrolls sideways.
	browsertest.Run(t, ctx, "a phone screen", chromedp.EmulateViewport(390, 844), chromedp.Navigate(srv.URL+"/"))
	browsertest.WaitFor(t, ctx, "the inbox on a phone (the told agent works now)", `document.querySelectorAll("#inbox li").length === 5 && !document.querySelector('#inbox li[data-id="loop/fix-tests"]')`)
	if w := browsertest.Eval[float64](t, ctx, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("on a 390 px wide screen the page is %v px wide", w)
	}
	browsertest.Screenshot(t, ctx, "inbox-phone")
	checkAxe(t, ctx, "the overview on a phone")
	browsertest.Run(t, ctx, "a laptop screen", chromedp.EmulateViewport(1280, 900), chromedp.Navigate(srv.URL+"/c/kai-7/api"))
	// One sentence per event, as ckpt log says it, the raw JSON behind a
	// toggle. (The page redraws on every change: poll for the text.)
	browsertest.WaitFor(t, ctx, "the timeline as sentences", `(document.getElementById("timeline")?.textContent || "").includes("#2 blocker b1: Waiting for DISCOVERY.md by seed preview raw") &&
	  document.getElementById("timeline").textContent.includes("#1 started by seed")`)
	// A message typed on the checkpoint page survives an update of it.
	browsertest.Run(t, ctx, "typing a message", chromedp.SendKeys(`//label[contains(., "Message")]/input`, "use the staging key"))
	if _, err := st.Append(context.Background(), "kai-7/api", ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{Agent: "secondary-b"}, ckpt.Note{Text: "still waiting"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the page redrawn with the note's event", `(document.getElementById("timeline")?.textContent || "").includes("#3 note added")`)
	if v := browsertest.Eval[string](t, ctx, `document.activeElement.value || ""`); v != "use the staging key" {
		t.Errorf("after an update the focused field holds %q, want the message being typed", v)
	}
	browsertest.Screenshot(t, ctx, "checkpoint-blocked")
	checkAccessibleNames(t, ctx)
	checkAxe(t, ctx, "a checkpoint page")
}

// TestOverviewFirstScreenAt10k: the overview of 10,000 checkpoints in
// Chromium, its JSON compressed; the time from navigation to the first
// rows drawn is logged (a figure for the reader, not an assertion).
func TestOverviewFirstScreenAt10k(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	ctx0 := context.Background()
	at := time.Now().Add(-time.Minute)
	for i := range 10_000 {
		p := ckpt.Patch{Title: ptr("task"), Agent: &ckpt.Agent{ID: "agent"}, Interval: ptr(ckpt.Duration(time.Hour))}
		if i%10 == 0 {
			p.Parent = ptr("plan")
		}
		e := ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, ckpt.Created{Patch: p})
		if _, err := st.Append(ctx0, "fleet/"+strings.Repeat("0", 5-len(itoa(i)))+itoa(i), e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")
	browsertest.Run(t, ctx, "a fresh load", chromedp.Navigate(srv.URL+"/"))
	browsertest.WaitFor(t, ctx, "the first screen", `performance.getEntriesByName("ckpt-first-rows").length > 0 && document.querySelectorAll("#rows tr[data-id]").length === 100`)
	ms := browsertest.Eval[float64](t, ctx, `performance.getEntriesByName("ckpt-first-rows")[0].startTime`)
	enc := browsertest.Eval[string](t, ctx, `performance.getEntriesByType("resource").filter(e => e.name.includes("/ui/api/overview")).map(e => e.encodedBodySize + "/" + e.decodedBodySize).join(" ")`)
	t.Logf("overview at 10,000 checkpoints: first rows drawn %.0f ms after navigation start; overview response encoded/decoded bytes %s", ms, enc)
	if !strings.Contains(enc, "/") {
		t.Fatalf("no overview request seen: %q", enc)
	}
	var e, d int
	fmt.Sscanf(strings.Fields(enc)[0], "%d/%d", &e, &d)
	if e == 0 || e*3 > d {
		t.Errorf("the overview's JSON is not compressed: %d bytes sent for %d", e, d)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
