package web

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/browsertest"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestFleetChangesAreAnnounced: a checkpoint that starts to need a person
// is said in the page's polite live region; a burst of them is one
// sentence that counts them, not one announcement each.
func TestFleetChangesAreAnnounced(t *testing.T) {
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
	if role := browsertest.Eval[string](t, ctx, `(() => { const a = document.getElementById("announce"); return a.getAttribute("role") + " " + a.getAttribute("aria-live"); })()`); role != "status polite" {
		t.Fatalf("the announcements' region is %q, want a polite status", role)
	}
	browsertest.Eval[bool](t, ctx, `(() => {
	  window.__said = [];
	  new MutationObserver(() => window.__said.push(document.getElementById("announce").textContent.trim()))
	    .observe(document.getElementById("announce"), { childList: true, characterData: true, subtree: true });
	  return true;
	})()`)
	ctx0 := context.Background()
	if _, err := st.Append(ctx0, "kai-7/spec", ckpt.MustEvent(ckpt.EventBlocker, time.Now(), ckpt.Actor{Agent: "secondary-a"}, ckpt.BlockerChange{Text: "needs the API key"}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the announcement", `window.__said.length === 1`)
	if said := browsertest.Eval[[]string](t, ctx, `window.__said`); !strings.HasPrefix(said[0], "kai-7/spec is now blocked: ") || !strings.Contains(said[0], "needs the API key") {
		t.Errorf("announced %q, want kai-7/spec blocked with its blocker", said)
	}

	// Eight fail at once: one sentence, counted.
	for i := range 8 {
		c := ckpt.Created{Patch: ckpt.Patch{Title: ptr("batch job"), Status: ptr(ckpt.StatusFailed)}}
		if _, err := st.Append(ctx0, fmt.Sprintf("batch/%d", i), ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "seed"}, c), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	browsertest.WaitFor(t, ctx, "the burst in the inbox", `document.querySelectorAll("#inbox li").length === 14`)
	browsertest.WaitFor(t, ctx, "the burst announced", `window.__said.some((s) => s.includes("checkpoints need you"))`)
	// Give a flood the time to show itself: announcements are coalesced over 2 s.
	browsertest.Await[bool](t, ctx, `new Promise((r) => setTimeout(() => r(true), 2500))`)
	said := browsertest.Eval[[]string](t, ctx, `window.__said.slice(1)`)
	if len(said) > 2 || !strings.Contains(strings.Join(said, " "), "failed") {
		t.Errorf("eight failures were announced as %d announcements %q, want one or two that count them", len(said), said)
	}
	var total int
	for _, s := range said {
		var n int
		if _, err := fmt.Sscanf(s, "%d checkpoints need you", &n); err == nil {
			total += n
		} else if strings.Contains(s, " is now failed") {
			total++
		}
	}
	if total != 8 {
		t.Errorf("the announcements %q count %d failures, want 8", said, total)
	}
}
