package servercli

import (
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
	"github.com/ckpt-dev/ckpt/internal/cli"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/monitor"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
	"github.com/ckpt-dev/ckpt/memstore"
)

// steppedMonitor runs runMonitor in a goroutine with a clock the test steps:
// each look of the monitor reads the clock once and waits for the test to
// give the time, so the test decides when each look happens and at what
// time.
type steppedMonitor struct {
	t      *testing.T
	times  chan time.Time
	cancel context.CancelFunc
	done   chan error
	asking chan struct{} // the monitor asks the time: it is between looks
	asked  bool          // it asked, and waits for the time
	out    *syncbuf.Buffer
	errOut *syncbuf.Buffer
}

func startMonitor(t *testing.T, st ckpt.Store, edit func(*MonitorOptions)) *steppedMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &steppedMonitor{t: t, times: make(chan time.Time), asking: make(chan struct{}), cancel: cancel, done: make(chan error, 1), out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}}
	ticks := make(chan time.Time, 64)
	for range cap(ticks) {
		ticks <- time.Time{}
	}
	last := t0
	o := &MonitorOptions{
		IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: m.out, ErrOut: m.errOut},
		Now: func() time.Time {
			select {
			case m.asking <- struct{}{}:
			case <-ctx.Done():
				return last
			}
			select {
			case last = <-m.times:
			case <-ctx.Done():
			}
			return last
		},
		Store: func() (ckpt.Store, error) { return st, nil },
		Ticks: ticks,
	}
	if edit != nil {
		edit(o)
	}
	go func() { m.done <- runMonitor(ctx, o) }()
	return m
}

// look makes the monitor look at time at; the look is finished once the
// next look starts, waitIdle returns or stop returns.
func (m *steppedMonitor) look(at time.Time) {
	m.waitIdle()
	m.asked = false
	m.times <- at
}

// waitIdle returns once the monitor has finished its last look and asks the
// time for its next one: a write made then is not raced by a look.
func (m *steppedMonitor) waitIdle() {
	if !m.asked {
		<-m.asking
		m.asked = true
	}
}

// stop cancels the monitor as Ctrl-C does and returns its error.
func (m *steppedMonitor) stop() error {
	m.cancel()
	select {
	case err := <-m.done:
		return err
	case <-time.After(time.Minute):
		m.t.Fatal("the monitor did not stop within a minute of its context ending")
		return nil
	}
}

func TestRunMonitorReportsEachTransitionOnceAndActs(t *testing.T) {
	h := newHarness(t)
	st := h.Store
	h.OK("start", "a", "--agent", "alice", "--interval", "5m")
	h.OK("start", "b", "--agent", "bob")

	var hookMu sync.Mutex
	var hooks []monitor.Transition
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var tr monitor.Transition
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &tr) != nil {
			t.Errorf("webhook request %s %s %q", r.Method, r.Header.Get("Content-Type"), body)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		hookMu.Lock()
		hooks = append(hooks, tr)
		hookMu.Unlock()
	}))
	defer srv.Close()
	execLog := filepath.Join(t.TempDir(), "exec.log")

	m := startMonitor(t, st, func(o *MonitorOptions) {
		o.Webhook = srv.URL + "/ckpt"
		o.Exec = `printf '%s %s>%s ' "$CKPT_ID" "$CKPT_FROM" "$CKPT_TO" >> ` + execLog + ` && cat >> ` + execLog + ` && echo >> ` + execLog
	})
	m.look(t0)                       // all live: nothing to say
	m.look(t0.Add(11 * time.Minute)) // a warn
	m.look(t0.Add(12 * time.Minute)) // a still warn: said already
	m.look(t0.Add(21 * time.Minute)) // a stale
	m.look(t0.Add(22 * time.Minute))
	m.waitIdle()
	st.SetClock(func() time.Time { return t0.Add(22 * time.Minute) }) // the store's clock: beats ahead of it are clamped
	if err := st.Beat(context.Background(), "a", ckpt.Signal{At: t0.Add(22 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	m.look(t0.Add(31 * time.Minute)) // a live again; b warn (15m interval)
	m.look(t0.Add(32 * time.Minute))
	if err := m.stop(); err != nil {
		t.Fatalf("the monitor stopped with %v, want a clean stop", err)
	}

	want := "2026-01-15T14:41:00Z a (alice): working → warn, silent 11m0s\n" +
		"2026-01-15T14:51:00Z a (alice): warn → stale, silent 21m0s\n" +
		"2026-01-15T15:01:00Z b (bob): working → warn, silent 31m0s\n" + // warn before live: the stale report's order
		"2026-01-15T15:01:00Z a (alice): stale → working, silent 9m0s\n"
	if got := m.out.String(); got != want {
		t.Errorf("monitor output:\n%s\nwant:\n%s", got, want)
	}
	if m.errOut.String() != "" {
		t.Errorf("stderr: %q", m.errOut.String())
	}
	hookMu.Lock()
	defer hookMu.Unlock()
	if len(hooks) != 4 || hooks[0].ID != "a" || hooks[0].To != ckpt.PresenceWarn || hooks[1].To != ckpt.PresenceStale || hooks[2].ID != "b" || hooks[2].Agent != "bob" || hooks[3].To != ckpt.PresenceWorking {
		t.Errorf("webhook got %+v", hooks)
	}
	log, err := os.ReadFile(execLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], `a working>warn {"id":"a","agent":"alice"`) || !strings.HasPrefix(lines[2], "b working>warn {") {
		t.Errorf("--exec ran with:\n%s", log)
	}
}

func TestRunMonitorAbandonsAfterTheGracePeriodAndReportsFailedActions(t *testing.T) {
	h := newHarness(t)
	st := h.Store
	h.OK("start", "a", "--interval", "5m")
	m := startMonitor(t, st, func(o *MonitorOptions) {
		o.AbandonAfter = 5 * time.Minute
		o.Exec = "echo nope >&2; exit 3"
	})
	m.look(t0.Add(21 * time.Minute)) // stale
	m.look(t0.Add(25 * time.Minute)) // stale for 5m: not yet past the grace
	m.look(t0.Add(26 * time.Minute)) // abandoned
	m.look(t0.Add(27 * time.Minute))
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
	c := h.Get("a")
	ev := h.History("a")
	if c.Status != ckpt.StatusAbandoned || !strings.Contains(c.StatusReason, "no sign of life for 26m0s") || ev[len(ev)-1].Actor.Agent != "ckpt-monitor" {
		t.Errorf("after the grace period: status %s (%s), last event by %q", c.Status, c.StatusReason, ev[len(ev)-1].Actor.Agent)
	}
	want := "2026-01-15T14:51:00Z a: working → stale, silent 21m0s\n2026-01-15T14:56:00Z a: stale → abandoned, silent 26m0s\n"
	if got := m.out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	errLines := strings.Split(strings.TrimSpace(m.errOut.String()), "\n")
	if len(errLines) != 2 || errLines[0] != "ckpt: warning: --exec for a failed: exit status 3: nope" {
		t.Errorf("failed actions on stderr: %q", m.errOut.String())
	}
}

func TestMonitorOnceAndBadFlags(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "a", "--agent", "alice", "--interval", "5m")
	h.Now = t0.Add(11 * time.Minute)
	if out := h.OK("monitor", "--once"); out != "2026-01-15T14:41:00Z a (alice): working → warn, silent 11m0s\n" {
		t.Errorf("monitor --once: %q", out)
	}
	if out := h.OK("monitor", "--once", "--stale", "10m"); !strings.Contains(out, "working → stale") {
		t.Errorf("monitor --once --stale 10m: %q", out)
	}
	for _, args := range [][]string{
		{"monitor", "--webhook", "ftp://x/y"},
		{"monitor", "--webhook", "not a url"},
		{"monitor", "--every", "0s"},
		{"monitor", "--abandon-after", "soon"},
		{"monitor", "--exec", "  "},
		{"monitor", "--warn", "2h", "--stale", "1h"},
	} {
		h.Fails(cli.ExitUsage, args...)
	}
}

func TestMonitorStopsWhenInterrupted(t *testing.T) {
	// Through the command line, with the Env's interrupt: the monitor runs
	// on a real ticker until the interrupt context ends, then exits 0.
	st := memstore.New()
	var out, errOut syncbuf.Buffer
	interrupt := make(chan struct{})
	env := &cmdutil.Env{
		IOStreams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		WorkDir:   t.TempDir(),
		Now:       func() time.Time { return t0 },
		Args:      []string{"monitor", "--every", "10ms"},
		Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-interrupt:
					cancel()
				case <-ctx.Done():
				}
			}()
			return ctx, cancel
		},
	}
	code := make(chan int, 1)
	go func() { code <- cli.MainOn(env, program(), st) }()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(errOut.String(), "Ctrl-C stops") {
		if time.Now().After(deadline) {
			t.Fatalf("the monitor did not start: %q", errOut.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(interrupt)
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("interrupted monitor exited %d, want 0; stderr %q", c, errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the monitor did not stop within a minute of the interrupt")
	}
	if want := "ckpt: monitoring every 10ms (warn 2x, stale 4x each checkpoint's interval); Ctrl-C stops\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
}

// TestMonitorActionTimeout: --action-timeout bounds a hung --exec, which
// is reported and killed; the look still finishes and the command exits 0.
func TestMonitorActionTimeout(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "a", "--agent", "alice", "--interval", "5m")
	h.Now = t0.Add(11 * time.Minute)
	code, out, errOut := h.Run("monitor", "--once", "--exec", "sleep 300 & wait", "--action-timeout", "200ms")
	if code != 0 || !strings.Contains(out, "working → warn") || !strings.Contains(errOut, "--exec for a did not finish within 200ms") {
		t.Errorf("monitor with a hung --exec: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, bad := range []string{"0s", "soon", "-1s"} {
		h.Fails(cli.ExitUsage, "monitor", "--once", "--action-timeout", bad)
	}
}
