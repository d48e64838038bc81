// Package browsertest drives a real headless Chromium for the dashboard's
// tests (package web, and cmd/ckpt against a real `ckpt serve`) through the
// DevTools protocol. Only tests import it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium finds the browser: $CKPT_CHROMIUM, or Debian's chromium. Without
// one the caller's test skips, except in CI (CI set), where .ci/run
// installs it and a missing browser is a failure.
func Chromium(t testing.TB) string {
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

// New starts a headless Chromium for the test, with the flags that keep it
// off the network, and answers every confirm() with yes. It ends with the
// test.
func New(t testing.TB) context.Context {
	t.Helper()
	// Not t.TempDir: Chromium's helper processes may still write to their
	// profile for a moment after the browser is gone, and a TempDir that
	// cannot be removed fails the test.
	profile, err := os.MkdirTemp("", "ckpt-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelT()
		cancelB()
		cancelA()
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove Chromium's profile %s", profile)
	})
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

// Run runs actions, failing the test on error.
func Run(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// WaitFor polls a JavaScript condition until it is true. The limit is
// generous: a loaded machine only makes the test slower.
func WaitFor(t testing.TB, ctx context.Context, what, js string) {
	t.Helper()
	Run(t, ctx, "waiting for "+what, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(30*time.Second)))
}

// Eval evaluates js in the page.
func Eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	var out T
	Run(t, ctx, "evaluating "+js, chromedp.Evaluate(js, &out))
	return out
}

// Await evaluates js, a promise, in the page and returns what it resolves to.
func Await[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	var out T
	Run(t, ctx, "awaiting "+js, chromedp.Evaluate(js, &out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	}))
	return out
}

// SignIn opens base, signs in with token and waits for the overview.
func SignIn(t testing.TB, ctx context.Context, base, token string) {
	t.Helper()
	Run(t, ctx, "signing in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#token`, chromedp.ByID),
		chromedp.SendKeys(`#token`, token, chromedp.ByID),
		chromedp.Submit(`#token`, chromedp.ByID),
		chromedp.WaitVisible(`#rows`, chromedp.ByID),
	)
}

// Screenshot saves the whole page as name.png in $CKPT_SCREENSHOTS (or a
// directory under the system's temporary one) for a reviewer to look at.
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := screenshotDir(t)
	// A page may skip rendering what is off the screen (content-visibility:
	// auto), which a person scrolling never sees but a capture of the whole
	// page would, as blank space: everything is rendered for the capture.
	var ok bool
	// (Through the CSSOM: a page's CSP refuses an inline <style>.)
	Run(t, ctx, "rendering the whole page", chromedp.Evaluate(`(() => {
	  const sheet = document.styleSheets[0];
	  if (sheet) sheet.insertRule("* { content-visibility: visible !important; }", sheet.cssRules.length);
	  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))));
	})()`, &ok, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	var buf []byte
	Run(t, ctx, "screenshot "+name, chromedp.FullScreenshot(&buf, 100))
	Run(t, ctx, "rendering as before", chromedp.Evaluate(`(() => {
	  const sheet = document.styleSheets[0];
	  if (sheet && sheet.cssRules.length && sheet.cssRules[sheet.cssRules.length - 1].cssText.startsWith("* { content-visibility: visible")) sheet.deleteRule(sheet.cssRules.length - 1);
	  return true;
	})()`, &ok))
	save(t, dir, name, buf)
}

// ScreenshotViewport saves what is on the screen now, as the page renders
// it, as name.png beside Screenshot's.
func ScreenshotViewport(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := screenshotDir(t)
	var buf []byte
	Run(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot(&buf))
	save(t, dir, name, buf)
}

func screenshotDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CKPT_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "ckpt-dashboard-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func save(t testing.TB, dir, name string, png []byte) {
	t.Helper()
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// UnnamedControls lists the visible controls and images of the page that
// have no name a screen reader could speak.
func UnnamedControls(t testing.TB, ctx context.Context) []string {
	t.Helper()
	return Eval[[]string](t, ctx, `(() => {
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
}
