package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/internal/web"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// BenchmarkFleet1000 is the fleet as deployed, time-compressed: 1,000
// simulated agents (each a beat every 5 s and an update every 30 s,
// divided by CKPT_FLEET_SPEEDUP, default 3; CKPT_FLEET_BEATS=0 leaves the
// beats out) write through two ckpt serve replicas (in this process, on
// loopback) over one PostgreSQL database, while 100 dashboards (clients
// of the page's event stream, half on each replica) and 200 /v1/changes
// streams are open, for CKPT_FLEET_SECONDS (default 60) after every agent
// has created its checkpoint (the steady state, not the start-up).
//
// The agents and streams run in one helper process and the pages in
// another (this test binary, TestFleetLoadHelper), standing for the
// fleet's machines and its people's, so that this process's CPU and the
// servers' timings are the servers' own, and an agent's timings are not
// the pages' work.
// It reports the p99 of an update's append as its agent sees it
// (append-p99-ms, goal 50) and of the delay from the start of an update's
// append to a dashboard receiving it (browser-delay-p99-ms, goal 1000),
// with the rates it ran at, the p99 of the append's handling inside the
// server, the CPU the run took in the servers' process, the load's
// process and PostgreSQL (cores: CPU seconds per second), and where the
// slow requests' time went (fleet-trace log lines: see fleetTrace).
//
//	go test -run '^$' -bench Fleet1000 -benchtime 1x ./remote
func BenchmarkFleet1000(b *testing.B) {
	seconds := envFloat("CKPT_FLEET_SECONDS", 60)
	db := cluster.NewDatabase(b)
	dsn := cluster.DSN(db, "pool_max_conns=32")
	var urls []string
	var mu sync.Mutex
	var handled []time.Duration
	stored := &timedAppends{}
	for range 2 {
		st, err := pgstoreOpen(dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		hub := feed.New(st, 0, 0)
		srv, err := server.New(timedStore{st, stored}, server.Options{Insecure: true, Logger: slog.New(slog.DiscardHandler), Feed: hub,
			Web: web.New(web.Options{Store: st, Feed: hub, Anonymous: web.Principal{Name: "bench"}})})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t0 := time.Now()
			pprof.Do(r.Context(), serverRole, func(context.Context) { srv.ServeHTTP(w, r) })
			if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/events/") {
				mu.Lock()
				handled = append(handled, time.Since(t0))
				mu.Unlock()
			}
		}))
		defer hs.Close()
		urls = append(urls, hs.URL)
	}
	pages := startFleetLoad(b, urls, "pages")
	defer pages.stop()
	pages.await("ready") // every page's stream open
	load := startFleetLoad(b, urls, "agents")
	defer load.stop()
	load.await("ready") // every agent's checkpoint created and on the pages
	from := time.Now()
	pages.say("start")
	mu.Lock()
	handled = handled[:0] // the creations are not the steady state's appends
	mu.Unlock()
	stored.reset()
	tr := startFleetTrace(b, cluster.DSN(db))
	cpu0, pg0 := processCPU(b), pgCPU(b)
	b.ResetTimer()
	time.Sleep(time.Duration(seconds * float64(time.Second)))
	cpu, pg := processCPU(b)-cpu0, pgCPU(b)-pg0
	tr.stop()
	res := load.result()
	pages.say(fmt.Sprintf("window %d %d", from.UnixNano(), from.Add(time.Duration(seconds*float64(time.Second))).UnixNano()))
	seen := pages.result()
	b.StopTimer()
	if res.Appends == 0 || seen.Deliveries == 0 {
		b.Fatalf("%d appends, %d deliveries measured", res.Appends, seen.Deliveries)
	}
	b.ReportMetric(res.AppendP99, "append-p99-ms")
	b.ReportMetric(seen.BrowserP99, "browser-delay-p99-ms")
	b.ReportMetric(seen.BrowserP50, "browser-delay-p50-ms")
	b.ReportMetric(res.FeedP99, "feed-delay-p99-ms")
	b.ReportMetric(res.BeatP99, "beat-p99-ms")
	b.ReportMetric(res.HTTPFloorP99, "floor-http-p99-ms")
	b.ReportMetric(p99(tr.commits), "floor-commit-p99-ms")
	mu.Lock()
	b.ReportMetric(p99(handled), "server-append-p99-ms")
	mu.Unlock()
	b.ReportMetric(stored.p99(), "store-append-p99-ms")
	b.ReportMetric(float64(res.Appends)/seconds, "updates/s")
	b.ReportMetric(res.BeatsPerSecond, "beats/s")
	b.ReportMetric(cpu.Seconds()/seconds, "go-cpu-cores")
	b.ReportMetric(res.CPUSeconds/res.Seconds, "agents-cpu-cores")
	b.ReportMetric(seen.CPUSeconds/seconds, "pages-cpu-cores")
	b.ReportMetric(pg.Seconds()/seconds, "pg-cpu-cores")
	b.Logf("%d updates, %d deliveries to dashboards measured over %.0f s at %gx", res.Appends, seen.Deliveries, res.Seconds, res.Speedup)
	b.Logf("fleet-trace: the slowest 1%% of updates as their agents saw them: %s", res.Slow)
	b.Logf("fleet-trace: the agents' process: %s", res.Sched)
	b.Logf("fleet-trace: the pages' process: %s", seen.Sched)
	tr.report(b)
}

// The profile labels (role=server) that mark the servers' CPU in this
// process's -cpuprofile; what it does not hold is the runtime's (the
// garbage collector) and the stores' own goroutines.
var serverRole = pprof.Labels("role", "server")

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

func p50(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

func p99(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)*99/100]) / float64(time.Millisecond)
}

// fleetLoad is a helper process that plays part of the fleet.
type fleetLoad struct {
	b     *testing.B
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// say writes line to the helper's input.
func (l *fleetLoad) say(line string) {
	if _, err := io.WriteString(l.in, line+"\n"); err != nil {
		l.b.Fatal(err)
	}
}

// startFleetLoad starts TestFleetLoadHelper in role against the servers
// at urls, with this process's CKPT_FLEET_* settings.
func startFleetLoad(b *testing.B, urls []string, role string) *fleetLoad {
	cmd := exec.Command(os.Args[0], "-test.run=^TestFleetLoadHelper$")
	cmd.Env = append(os.Environ(), "CKPT_FLEET_LOAD_URLS="+strings.Join(urls, " "), "CKPT_FLEET_LOAD_ROLE="+role)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	l := &fleetLoad{b: b, cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(l.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
	}()
	return l
}

// await waits for the helper to print a line starting with prefix and
// returns the rest of it; the helper's exit fails the benchmark.
func (l *fleetLoad) await(prefix string) string {
	for line := range l.lines {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	l.b.Fatalf("the fleet's load process ended before saying %q", prefix)
	return ""
}

func (l *fleetLoad) result() fleetResult {
	var r fleetResult
	if err := json.Unmarshal([]byte(l.await("result")), &r); err != nil {
		l.b.Fatal(err)
	}
	return r
}

func (l *fleetLoad) stop() { _ = l.cmd.Process.Kill(); _ = l.cmd.Wait() }

// timedStore is the servers' Store, its Append timed: what the database
// part of a served append took, against the handler's whole.
type timedStore struct {
	*pgstore.Store
	t *timedAppends
}

func (s timedStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	t0 := time.Now()
	res, err := s.Store.Append(ctx, id, e, opts)
	s.t.add(time.Since(t0))
	return res, err
}

type timedAppends struct {
	mu sync.Mutex
	ds []time.Duration
}

func (t *timedAppends) add(d time.Duration) { t.mu.Lock(); t.ds = append(t.ds, d); t.mu.Unlock() }
func (t *timedAppends) reset()              { t.mu.Lock(); t.ds = nil; t.mu.Unlock() }
func (t *timedAppends) p99() float64        { t.mu.Lock(); defer t.mu.Unlock(); return p99(t.ds) }
