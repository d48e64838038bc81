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
	"github.com/ckpt-dev/ckpt/memstore"
)

// seedFleetOf writes n working checkpoints fleet/00000 … in one minute's
// past, each with a title and an agent.
func seedFleetOf(t *testing.T, st ckpt.Store, n int) {
	t.Helper()
	at := time.Now().Add(-time.Minute)
	for i := range n {
		p := ckpt.Patch{Title: ptr("task"), Agent: &ckpt.Agent{ID: "agent"}, Interval: ptr(ckpt.Duration(time.Hour))}
		e := ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "seed"}, ckpt.Created{Patch: p})
		if _, err := st.Append(context.Background(), fleetID(i), e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func fleetID(i int) string { return fmt.Sprintf("fleet/%05d", i) }

// loadAll presses "Load more" until the page has loaded want rows.
func loadAll(t *testing.T, ctx context.Context, want int) {
	t.Helper()
	got := browsertest.Await[float64](t, ctx, `(async () => {
	  const n = () => document.querySelectorAll("#rows tr[data-id]").length;
	  const more = document.getElementById("more");
	  while (!more.hidden) {
	    const before = n();
	    more.click();
	    while (n() === before && !more.hidden) await new Promise((r) => setTimeout(r, 20));
	  }
	  return n();
	})()`)
	if int(got) != want {
		t.Fatalf("after Load more the page has %v rows, want %d", got, want)
	}
}

// TestRowsKeptAcrossReconnect: a page that has loaded more than the 500
// rows one read returns keeps every row when its event stream reconnects
// (the server drops every connection), and a row written meanwhile is
// brought up to date.
func TestRowsKeptAcrossReconnect(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedFleetOf(t, st, 620)
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: time.Second}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")
	browsertest.WaitFor(t, ctx, "the live feed", `document.getElementById("live").textContent === "live"`)
	loadAll(t, ctx, 620)
	reads := browsertest.Eval[float64](t, ctx, `performance.getEntriesByType("resource").filter((e) => e.name.includes("/ui/api/overview")).length`)

	srv.CloseClientConnections()
	e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "agent"}, ckpt.Patch{CurrentStep: ptr("written while the page was away")})
	if _, err := st.Append(context.Background(), fleetID(610), e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, ctx, "the page's refresh after the reconnect", fmt.Sprintf(
		`performance.getEntriesByType("resource").filter((e) => e.name.includes("/ui/api/overview")).length >= %v && document.getElementById("live").textContent === "live"`, reads+2))
	browsertest.WaitFor(t, ctx, "the row written meanwhile", fmt.Sprintf(`document.querySelector('tr[data-id=%q]')?.textContent.includes("written while the page was away")`, fleetID(610)))
	if n := browsertest.Eval[float64](t, ctx, `document.querySelectorAll("#rows tr[data-id]").length`); n != 620 {
		t.Errorf("after a reconnect the page shows %v rows, want the 620 it had loaded", n)
	}
	if more := browsertest.Eval[bool](t, ctx, `document.getElementById("more").hidden`); !more {
		t.Error("after a reconnect the page offers Load more, though every row is loaded")
	}
}

// TestBurstAtThousandsOfRows: a burst of 20 updates reaches a page with
// 100 rows loaded, then one with 3,100; each time the page's long tasks
// (PerformanceObserver) and the time from the burst's first write to the
// last row drawn are logged, the 100-row figures being the floor. The
// page applies every update and keeps its rows in order.
func TestBurstAtThousandsOfRows(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium: run without -short")
	}
	st := memstore.New()
	seedFleetOf(t, st, 3100)
	srv := httptest.NewServer(New(Options{Store: st, Authenticate: authenticate, Keepalive: time.Second}))
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t)
	browsertest.SignIn(t, ctx, srv.URL, "admin-secret")
	browsertest.WaitFor(t, ctx, "the live feed", `document.getElementById("live").textContent === "live"`)
	small := burst(t, ctx, st, 100, 1, 5)
	loadAll(t, ctx, 3100)
	large := burst(t, ctx, st, 3100, 2, 155)
	t.Logf("a burst of 20 updates at 100 rows loaded: longest task %.0f ms, long tasks %.0f ms in all, drawn %.0f ms after the first write", small[0], small[1], small[2])
	t.Logf("a burst of 20 updates at 3,100 rows loaded: longest task %.0f ms, long tasks %.0f ms in all, drawn %.0f ms after the first write", large[0], large[1], large[2])
	t.Logf("3,100 rows / 100 rows: drawn %.2fx", large[2]/max(small[2], 1))
	order := browsertest.Eval[bool](t, ctx, `(() => { const ids = [...document.querySelectorAll("#rows tr[data-id]")].map((tr) => tr.dataset.id);
	  return ids.length === 3100 && ids.every((id, i) => i === 0 || ids[i-1] < id); })()`)
	if !order {
		t.Error("after the bursts the rows are not the 3,100 in ID order")
	}
	// Scrolled to the middle, the rows on the screen are drawn (the rows
	// off it are skipped by the browser, content-visibility: auto).
	browsertest.Await[bool](t, ctx, `(() => { document.querySelector('tr[data-id="fleet/01550"]').scrollIntoView({ block: "center" });
	  return new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true)))); })()`)
	if hit := browsertest.Eval[string](t, ctx, `document.elementFromPoint(300, innerHeight / 2)?.closest("tr")?.dataset.id || ""`); !strings.HasPrefix(hit, "fleet/015") {
		t.Errorf("in the middle of the screen, scrolled to fleet/01550, is %q", hit)
	}
	browsertest.ScreenshotViewport(t, ctx, "overview-3100-scrolled")
}

// burst writes 20 updates, to every step-th of the first rows loaded, and
// returns the page's longest task, its long tasks in all (ms) and the time
// from just before the first write to the frame that showed the last.
func burst(t *testing.T, ctx context.Context, st ckpt.Store, rows, round, step int) [3]float64 {
	t.Helper()
	text := fmt.Sprintf("burst %d", round)
	// Settled first: the frames that lay out rows just loaded are not the burst's.
	browsertest.Await[bool](t, ctx, `new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => r(true), 300))))`)
	browsertest.Eval[bool](t, ctx, fmt.Sprintf(`(() => {
	  window.__long = [];
	  window.__obs && window.__obs.disconnect();
	  window.__obs = new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); });
	  window.__obs.observe({ type: "longtask" });
	  window.__t0 = performance.now();
	  window.__drawn = new Promise((resolve) => {
	    const check = () => {
	      const n = [...document.querySelectorAll("#rows tr[data-id]")].filter((tr) => tr.cells[4].textContent === %q).length;
	      if (n === 20) resolve(performance.now() - window.__t0); else requestAnimationFrame(check);
	    };
	    requestAnimationFrame(check);
	  });
	  return true;
	})()`, text))
	for i := range 20 {
		e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "agent"}, ckpt.Patch{CurrentStep: ptr(text)})
		if _, err := st.Append(context.Background(), fleetID(i*step), e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	drawn := browsertest.Await[float64](t, ctx, `window.__drawn`)
	long := browsertest.Eval[[]float64](t, ctx, `window.__long`)
	var most, all float64
	for _, d := range long {
		most, all = max(most, d), all+d
	}
	if n := browsertest.Eval[float64](t, ctx, `document.querySelectorAll("#rows tr[data-id]").length`); int(n) != rows {
		t.Errorf("after the burst the page shows %v rows, want %d", n, rows)
	}
	return [3]float64{most, all, drawn}
}
