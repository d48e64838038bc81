package monitor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/monitor"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// tickAt sets clk to t0+at, looks once and returns the transitions as
// "ID:from>to" words joined by spaces.
func tickAt(t *testing.T, ctx context.Context, m *monitor.Monitor, clk *clock, at time.Duration) string {
	t.Helper()
	clk.now = t0.Add(at)
	got, err := m.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(got))
	for _, tr := range got {
		names = append(names, tr.ID+":"+string(tr.From)+">"+string(tr.To))
	}
	return strings.Join(names, " ")
}

func start(t *testing.T, s ckpt.Store, id string, interval time.Duration) {
	t.Helper()
	iv := ckpt.Duration(interval)
	e := ckpt.MustEvent(ckpt.EventCreated, t0, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Interval: &iv, Agent: &ckpt.Agent{ID: id + "-agent"}}})
	if _, err := s.Append(context.Background(), id, e, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestTransitionsReportedOnceWithFakeClock(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	start(t, s, "a", time.Minute)
	start(t, s, "b", time.Minute)

	var hooks []monitor.Transition
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook got %s with content type %q", r.Method, r.Header.Get("Content-Type"))
		}
		var tr monitor.Transition
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &tr); err != nil {
			t.Errorf("webhook body %s: %v", body, err)
		}
		mu.Lock()
		hooks = append(hooks, tr)
		mu.Unlock()
	}))
	defer srv.Close()
	execLog := filepath.Join(t.TempDir(), "exec.log")

	clk := &clock{now: t0}
	var log bytes.Buffer
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now, Webhook: srv.URL, Exec: `echo "$CKPT_ID $CKPT_FROM $CKPT_TO" >> ` + execLog, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	step := func(at time.Duration, want ...string) {
		t.Helper()
		if got := tickAt(t, ctx, m, clk, at); got != strings.Join(want, " ") {
			t.Fatalf("at +%s: transitions %q, want %q", at, got, want)
		}
	}
	step(0)
	step(90 * time.Second)
	step(150*time.Second, "a:working>warn", "b:working>warn")
	step(170 * time.Second) // still warn: nothing new
	if err := s.Beat(ctx, "b", ckpt.Signal{At: t0.Add(175 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	step(180*time.Second, "b:warn>working")
	step(250*time.Second, "a:warn>stale")
	step(260 * time.Second)

	mu.Lock()
	defer mu.Unlock()
	if len(hooks) != 4 || hooks[3].ID != "a" || hooks[3].To != ckpt.PresenceStale || hooks[3].Agent != "a-agent" {
		t.Fatalf("webhook received %+v", hooks)
	}
	got, _ := os.ReadFile(execLog)
	if string(got) != "a working warn\nb working warn\nb warn working\na warn stale\n" {
		t.Fatalf("exec ran with:\n%s", got)
	}
	if !strings.Contains(log.String(), "a (a-agent): warn → stale") {
		t.Fatalf("log does not report the transition:\n%s", log.String())
	}
}

func TestAbandonAfterGrace(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	start(t, s, "quiet", time.Minute)
	clk := &clock{now: t0}
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now, AbandonAfter: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = t0.Add(5 * time.Minute)
	if tr, _ := m.Tick(ctx); len(tr) != 1 || tr[0].To != ckpt.PresenceStale {
		t.Fatalf("first tick after 5m: %+v", tr)
	}
	clk.now = t0.Add(9*time.Minute + time.Second)
	tr, err := m.Tick(ctx)
	if err != nil || len(tr) != 1 || tr[0].To != monitor.Abandoned {
		t.Fatalf("after the grace period: %+v, %v", tr, err)
	}
	c, _ := s.Get(ctx, "quiet", 0)
	if c.Status != ckpt.StatusAbandoned || !strings.Contains(c.StatusReason, "no sign of life") {
		t.Fatalf("status %s (%q), want abandoned with a reason", c.Status, c.StatusReason)
	}
	if tr, _ := m.Tick(ctx); len(tr) != 0 {
		t.Fatalf("an abandoned checkpoint is reported again: %+v", tr)
	}
}

func TestRunStopsCleanly(t *testing.T) {
	s := memstore.New()
	start(t, s, "a", time.Minute)
	m, _ := monitor.New(monitor.Options{Store: s, Now: func() time.Time { return t0 }})
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time)
	done := make(chan error)
	go func() { done <- m.Run(ctx, ticks) }()
	ticks <- t0
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
}

func TestDamageDoesNotBlindTheWatch(t *testing.T) {
	ctx := context.Background()
	mem := memstore.New()
	start(t, mem, "a", time.Minute)
	start(t, mem, "b", time.Minute)
	clk := &clock{now: t0}
	var log bytes.Buffer
	m, err := monitor.New(monitor.Options{Store: storetest.WithDamaged(mem, "b"), Now: clk.Now, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	clk.now = t0.Add(5 * time.Minute)
	tr, err := m.Tick(ctx)
	if err != nil || len(tr) != 1 || tr[0].ID != "a" || tr[0].To != ckpt.PresenceStale {
		t.Fatalf("with b damaged: %+v, %v; want a's stale transition", tr, err)
	}
	if _, err := m.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "could not be read (b)"); n != 1 {
		t.Fatalf("the damage is logged %d times over two ticks, want once:\n%s", n, log.String())
	}
}

// The monitor reports a tick's transitions in the order of every stale
// report (ckpt.SilenceLess): stale first, then warn, each by ID.
func TestTransitionsInTheStaleReportsOrder(t *testing.T) {
	s := memstore.New()
	start(t, s, "a", 10*time.Minute) // 25 min silent: warn (20m), not stale (40m)
	start(t, s, "b", time.Minute)    // stale
	start(t, s, "c", 10*time.Minute) // warn
	clk := &clock{now: t0.Add(25 * time.Minute)}
	m, err := monitor.New(monitor.Options{Store: s, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range out {
		got = append(got, tr.ID+":"+string(tr.To))
	}
	if want := []string{"b:stale", "a:warn", "c:warn"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("transitions %v, want %v", got, want)
	}
}

// TestFailuresGoToWarn: a failed action is a warning apart from the
// transitions, which alone go to Log (ckpt monitor prints the two on
// stderr and stdout); without Warn both go to Log.
func TestFailuresGoToWarn(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	start(t, s, "a", time.Minute)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, withWarn := range []bool{true, false} {
		clk := &clock{now: t0}
		var log bytes.Buffer
		var warnings []string
		opts := monitor.Options{Store: s, Now: clk.Now, Webhook: srv.URL, Log: &log}
		if withWarn {
			opts.Warn = func(msg string) { warnings = append(warnings, msg) }
		}
		m, err := monitor.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := tickAt(t, ctx, m, clk, 3*time.Minute); got != "a:working>warn" {
			t.Fatalf("transitions %q", got)
		}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if withWarn {
			if len(lines) != 1 || !strings.Contains(lines[0], "a (a-agent): working → warn") {
				t.Errorf("with Warn, Log holds %q, want the transition alone", lines)
			}
			if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "--webhook for a failed: HTTP 500") {
				t.Errorf("warnings %q", warnings)
			}
			continue
		}
		if len(lines) != 2 || !strings.HasPrefix(lines[1], "monitor: --webhook for a failed: HTTP 500") {
			t.Errorf("without Warn, Log holds %q, want the transition and the failure", lines)
		}
	}
}

// TestNewRefusesBadActions: a webhook that is not an http(s) URL, or a
// blank command, is refused before the watch starts (ckpt monitor exits 2).
func TestNewRefusesBadActions(t *testing.T) {
	for _, o := range []monitor.Options{
		{Webhook: "ftp://x/y"}, {Webhook: "not a url"}, {Webhook: "https://"}, {Exec: "  "},
	} {
		o.Store = memstore.New()
		if _, err := monitor.New(o); ckpt.ErrorCode(err) != ckpt.CodeInvalid {
			t.Errorf("New(%+v): %v, want an invalid-input error", o, err)
		}
	}
	if _, err := monitor.New(monitor.Options{Store: memstore.New(), Webhook: "http://hooks.example.com/ckpt", Exec: "true"}); err != nil {
		t.Errorf("a good webhook and command: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	for _, c := range []struct {
		o    monitor.Options
		want string
	}{
		{monitor.Options{}, "warn 2x, stale 4x each checkpoint's interval"},
		{monitor.Options{Thresholds: ckpt.Thresholds{Warn: time.Minute}}, "warn after 1m0s, stale 4x each interval"},
		{monitor.Options{Thresholds: ckpt.Thresholds{Stale: time.Hour}}, "warn 2x each interval, stale after 1h0m0s"},
		{monitor.Options{Thresholds: ckpt.Thresholds{Warn: time.Minute, Stale: time.Hour}, Exec: "x", Webhook: "https://h/", AbandonAfter: 2 * time.Hour},
			"warn after 1m0s, stale after 1h0m0s; running --exec; posting to --webhook; abandoning after 2h0m0s stale"},
	} {
		if got := c.o.Describe(); got != c.want {
			t.Errorf("Describe() = %q, want %q", got, c.want)
		}
	}
}
