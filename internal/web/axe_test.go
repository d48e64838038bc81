package web

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ckpt-dev/ckpt/internal/browsertest"
)

// checkAxe runs axe-core (the file CKPT_AXE names; .ci/run installs it)
// over the page and fails on any violation it reports. Without the file it
// says so and checks nothing, unless CI=true, where that is a failure.
func checkAxe(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	path := os.Getenv("CKPT_AXE")
	src, err := os.ReadFile(path)
	if path == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core not found (CKPT_AXE=%q: %v): .ci/run installs it", path, err)
		}
		t.Logf("axe-core not checked on %s: set CKPT_AXE to axe.min.js (.ci/run installs it)", page)
		return
	}
	var ok bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(string(src)+";true", &ok)); err != nil {
		t.Fatalf("loading axe-core into the page: %v", err)
	}
	found := browsertest.Await[[]string](t, ctx, `axe.run(document, {resultTypes: ["violations"]}).then(r =>
	  r.violations.map(v => v.id + " (" + v.impact + "): " + v.help + " at " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(", ")))`)
	if len(found) > 0 {
		t.Errorf("axe-core finds %d violation(s) on %s:\n%s", len(found), page, strings.Join(found, "\n"))
	}
}
