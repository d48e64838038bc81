package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/process"
)

// chromium finds the browser the tests drive: $CKPT_CHROMIUM, or Debian's
// chromium. Without one the browser tests skip, except in CI, where .ci/run
// installs it and a missing browser is a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CKPT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no Chromium: .ci/run installs Debian's chromium package")
	}
	t.Skip("no Chromium here: apt-get install chromium (or set CKPT_CHROMIUM) to run the browser tests")
	return ""
}

// browser starts a headless Chromium for the test, answering every
// confirm() with yes.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// screenshotDir is where the test leaves pictures for a reviewer.
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("CKPT_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ckpt-dashboard-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var buf []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&buf, 100)); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(screenshotDir(t), name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// waitFor polls a JavaScript condition until it is true; the limit is
// generous, so a loaded machine only makes the test slower.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	var out T
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &out)); err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return out
}

func signIn(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#token`, chromedp.ByID),
		chromedp.SendKeys(`#token`, token, chromedp.ByID),
		chromedp.Submit(`#token`, chromedp.ByID),
		chromedp.WaitVisible(`#rows`, chromedp.ByID),
	)
	if err != nil {
		t.Fatalf("signing in: %v", err)
	}
}

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
		step("research", ckpt.StepInProgress, now), step("research", ckpt.StepDone, now.Add(10*time.Minute)), step("spec", ckpt.StepInProgress, now.Add(11*time.Minute)))
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
	ctx := browser(t)

	signIn(t, ctx, srv.URL, "admin-secret")
	waitFor(t, ctx, "the rows the store holds", `document.querySelectorAll("#rows tr[data-id]").length === 4`)
	waitFor(t, ctx, "the live feed", `document.getElementById("live").textContent === "live"`)
	counts := eval[string](t, ctx, `document.getElementById("counts").textContent`)
	if !strings.HasPrefix(counts, "1 waiting for you") {
		t.Errorf("counts %q: want waiting first", counts)
	}
	if got := eval[string](t, ctx, `document.querySelector('tr[data-id="kai-7/api"]').textContent`); !strings.Contains(got, "1 blocker") {
		t.Errorf("the blocked row does not call out its blocker: %q", got)
	}
	shoot(t, ctx, "overview")

	// A write from elsewhere appears without a reload.
	marker := eval[float64](t, ctx, `window.__marker = Math.random()`)
	e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "secondary-a"}, ckpt.Patch{CurrentStep: ptr("Drafting the checklist")})
	if _, err := st.Append(context.Background(), "kai-7/spec", e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live update", `document.querySelector('tr[data-id="kai-7/spec"]').textContent.includes("Drafting the checklist")`)
	if got := eval[float64](t, ctx, `window.__marker`); got != marker {
		t.Error("the page reloaded to show the update")
	}

	// The agent's process is killed: with nothing written, the row turns dead.
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	if err := st.Beat(context.Background(), "kai-7/spec", sig); err != nil { // busy again after the update
		t.Fatal(err)
	}
	waitFor(t, ctx, "the busy agent", `document.querySelector('tr[data-id="kai-7/spec"] .badge')?.textContent === "busy"`)
	if err := agent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the killed agent seen dead", `document.querySelector('tr[data-id="kai-7/spec"] .badge')?.textContent === "dead"`)
	shoot(t, ctx, "overview-dead")

	// A filter in the URL narrows the list.
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/?parent=kai-7")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the filtered list", `document.querySelectorAll("#rows tr[data-id]").length === 2`)

	checkAccessibleNames(t, ctx)
	checkKeyboard(t, ctx, srv.URL)

	// The checkpoint page, and a takeover from it.
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/c/kai-7/spec")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the checkpoint page", `document.querySelectorAll("#timeline li").length === 5`)
	shoot(t, ctx, "checkpoint")
	checkAccessibleNames(t, ctx)
	err := chromedp.Run(ctx,
		chromedp.SendKeys(`input[name="agent"]`, "Secondary-C"),
		chromedp.Click(`//button[text()="Take over"]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the takeover", `document.querySelector(".meta").textContent.includes("agent Secondary-C")`)
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
	ctx := browser(t)
	signIn(t, ctx, srv.URL, "read-secret")
	if err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/c/kai-7/api")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the checkpoint page", `document.querySelector(".detail h1") !== null`)
	buttons := eval[[]string](t, ctx, `[...document.querySelectorAll("main button")].map(b => b.textContent)`)
	for _, b := range buttons {
		if b == "Take over" || b == "Mark abandoned" || b == "Clear blocker" || b == "Add note" || b == "Restore" {
			t.Errorf("a read token sees the %q button", b)
		}
	}
	if who := eval[string](t, ctx, `document.getElementById("who").textContent`); !strings.Contains(who, "read only") {
		t.Errorf("the header says %q, want read only", who)
	}
}

// checkAccessibleNames fails for any control or image without a name a
// screen reader could speak.
func checkAccessibleNames(t *testing.T, ctx context.Context) {
	t.Helper()
	unnamed := eval[[]string](t, ctx, `(() => {
	  const name = (el) => (el.getAttribute("aria-label") || el.getAttribute("title") || el.textContent || "").trim() ||
	    (el.id && document.querySelector('label[for="' + el.id + '"]')?.textContent.trim()) ||
	    (el.closest("label")?.textContent.trim()) || "";
	  const bad = [];
	  for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, [role=img], [role=progressbar]')) {
	    if (el.closest("[hidden]")) continue;
	    if (!name(el)) bad.push(el.outerHTML.slice(0, 80));
	  }
	  return bad;
	})()`)
	if len(unnamed) > 0 {
		t.Errorf("controls without an accessible name: %v", unnamed)
	}
}

// checkKeyboard tabs to a checkpoint's link and opens it with Enter.
func checkKeyboard(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible(`#rows`, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "rows", `document.querySelectorAll("#rows tr[data-id]").length > 0`)
	for i := 0; i < 40; i++ {
		if err := chromedp.Run(ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		href := eval[string](t, ctx, `document.activeElement.getAttribute("href") || ""`)
		if strings.HasPrefix(href, "/c/") {
			if err := chromedp.Run(ctx, chromedp.KeyEvent("\r")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, "the page opened from the keyboard", fmt.Sprintf(`location.pathname === %q && document.querySelector(".detail h1") !== null`, href))
			return
		}
	}
	t.Error("40 presses of Tab never reached a checkpoint's link")
}
