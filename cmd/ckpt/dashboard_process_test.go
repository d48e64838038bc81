package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt/internal/browsertest"
)

// The dashboard of a real `ckpt serve`, in a real Chromium, fed by real
// ckpt processes writing to the store.
func TestDashboardOfARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ckpt serve and Chromium: run without -short")
	}
	bin := ckptBinary(t)
	store := newProcessStore(t, bin)
	ckpt := func(args ...string) string {
		t.Helper()
		out, err := ckptRun(t, bin, append([]string{"--store", store}, args...)...)
		if err != nil {
			t.Fatalf("ckpt %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return out
	}
	ckpt("start", "kai-7/spec", "--agent", "Secondary-A", "--title", "Schedule fetcher spec", "--parent", "kai-7",
		"--step", "research", "--step", "spec", "--step", "checklist")
	ckpt("step", "kai-7/spec", "research", "--done")
	ckpt("start", "kai-7/api", "--agent", "Secondary-B", "--title", "API client", "--parent", "kai-7")
	ckpt("block", "kai-7/api", "Waiting for DISCOVERY.md")
	ckpt("start", "loop/tests", "--agent", "claude-1", "--title", "Fix flaky tests")

	srv := startServe(t, bin, store, "127.0.0.1:0")
	reader, code := remoteRun(t, bin, srv.url, srv.admin, "token", "create", "--scope", "read")
	reader = strings.TrimSpace(reader)
	if code != 0 || !strings.HasPrefix(reader, "ckpt_") {
		t.Fatalf("token create --scope read: exit %d: %s", code, reader)
	}

	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.url, srv.admin)
	browsertest.WaitFor(t, ctx, "what the CLI wrote", `document.querySelectorAll("#rows tr[data-id]").length === 3`)
	browsertest.WaitFor(t, ctx, "the live feed", `document.getElementById("live").textContent === "live"`)

	// Another process writes: the open page shows it without a reload.
	marker := browsertest.Eval[float64](t, ctx, `window.__marker = Math.random()`)
	ckpt("update", "loop/tests", "--current-step", "Bisecting the flaky test")
	browsertest.WaitFor(t, ctx, "a ckpt update from another process", `document.querySelector('tr[data-id="loop/tests"]').textContent.includes("Bisecting the flaky test")`)
	if browsertest.Eval[float64](t, ctx, `window.__marker`) != marker {
		t.Error("the page reloaded to show the update")
	}

	// A killed agent turns dead on the open page, with nothing written.
	agent := exec.Command("sleep", "300")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agent.Process.Kill(); _ = agent.Wait() })
	ckpt("beat", "loop/tests", "--state", "busy", "--reason", "go test ./...", "--pid", strconv.Itoa(agent.Process.Pid))
	browsertest.WaitFor(t, ctx, "the busy agent", `document.querySelector('tr[data-id="loop/tests"] .badge')?.textContent === "busy"`)
	if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the killed agent seen dead", `document.querySelector('tr[data-id="loop/tests"] .badge')?.textContent === "dead"`)
	browsertest.Screenshot(t, ctx, "serve-overview")

	// A filter in the URL narrows the list.
	browsertest.Run(t, ctx, "open a filtered view", chromedp.Navigate(srv.url+"/?parent=kai-7"))
	browsertest.WaitFor(t, ctx, "the filtered list", `document.querySelectorAll("#rows tr[data-id]").length === 2`)
	if unnamed := browsertest.UnnamedControls(t, ctx); len(unnamed) > 0 {
		t.Errorf("controls without an accessible name: %v", unnamed)
	}

	// A takeover from the page archives and hands over like the CLI.
	browsertest.Run(t, ctx, "open a checkpoint", chromedp.Navigate(srv.url+"/c/kai-7/spec"))
	browsertest.WaitFor(t, ctx, "the checkpoint page", `document.querySelectorAll("#timeline li").length >= 2`)
	browsertest.Screenshot(t, ctx, "serve-checkpoint")
	browsertest.Run(t, ctx, "take over", chromedp.SendKeys(`input[name="agent"]`, "Secondary-C"), chromedp.Click(`//button[text()="Take over"]`))
	browsertest.WaitFor(t, ctx, "the takeover", `document.querySelector(".meta").textContent.includes("agent Secondary-C")`)
	var shown struct {
		Agent struct{ Name string } `json:"agent"`
	}
	if err := json.Unmarshal([]byte(ckpt("show", "kai-7/spec", "--json")), &shown); err != nil || shown.Agent.Name != "Secondary-C" {
		t.Errorf("ckpt show after the page's takeover: agent %+v (%v)", shown.Agent, err)
	}
	if ls := ckpt("ls", "--all", "--prefix", "kai-7/spec_crashed_"); !strings.Contains(ls, "Secondary-A") {
		t.Errorf("no archive of Secondary-A's state after the takeover:\n%s", ls)
	}

	// A read token sees no action, and the server refuses one anyway.
	browsertest.Run(t, ctx, "sign out", chromedp.Click(`#signout button`), chromedp.WaitVisible(`#token`, chromedp.ByID))
	browsertest.SignIn(t, ctx, srv.url, reader)
	browsertest.Run(t, ctx, "open a checkpoint", chromedp.Navigate(srv.url+"/c/kai-7/api"))
	browsertest.WaitFor(t, ctx, "the checkpoint page", `document.querySelector(".detail h1") !== null`)
	buttons := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll("main button")].map(b => b.textContent)`)
	for _, b := range buttons {
		if b == "Take over" || b == "Mark abandoned" || b == "Clear blocker" || b == "Add note" || b == "Restore" {
			t.Errorf("a read token sees the %q button", b)
		}
	}
	status := browsertest.Await[float64](t, ctx, fmt.Sprintf(`fetch("/ui/api/action", {method: "POST", headers: {"Content-Type": "application/json",
	  "X-Ckpt-Csrf": (document.cookie.match(/ckpt_csrf=([^;]+)/) || [])[1] || ""}, body: JSON.stringify({action: "note", id: %q, text: "x"})}).then(r => r.status)`, "kai-7/api"))
	if status != 403 {
		t.Errorf("a read token's action from the page: HTTP %v, want 403", status)
	}
}
