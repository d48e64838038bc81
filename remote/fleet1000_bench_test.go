package remote_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
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
	"github.com/ckpt-dev/ckpt/remote"
)

// BenchmarkFleet1000 is the fleet as deployed, time-compressed: 1,000
// simulated agents (each a beat every 5 s and an update every 30 s,
// divided by CKPT_FLEET_SPEEDUP, default 3; CKPT_FLEET_BEATS=0 leaves the
// beats out) write through two ckpt serve
// replicas (in this process, on loopback) over one PostgreSQL database,
// while 100 dashboards (clients of the page's event stream, half on each
// replica) and 200 /v1/changes streams are open, for CKPT_FLEET_SECONDS
// (default 60) after every agent has created its checkpoint (the steady
// state, not the start-up), all in this process. It reports the p99 of an
// update's append (append-p99-ms, goal 50) and of the delay from the start
// of an update's append to a dashboard receiving it (browser-delay-p99-ms,
// goal 1000), with the rates it ran at, the p99 of the append's handling
// inside the server, and the CPU the run took in this process and in
// PostgreSQL (cores: CPU seconds per second). With -cpuprofile, the
// profile's role labels split this process's CPU between the servers and
// the simulated fleet.
//
//	go test -run '^$' -bench Fleet1000 -benchtime 1x ./remote
func BenchmarkFleet1000(b *testing.B) {
	const agents, dashboards, streams = 1000, 100, 200
	speedup, seconds := envFloat("CKPT_FLEET_SPEEDUP", 3), envFloat("CKPT_FLEET_SECONDS", 60)
	beatEvery := time.Duration(float64(5*time.Second) / speedup)
	if os.Getenv("CKPT_FLEET_BEATS") == "0" { // the diagnosis of docs/design.md: updates only
		beatEvery = 24 * time.Hour
	}
	updateEvery := time.Duration(float64(30*time.Second) / speedup)
	dsn := cluster.DSN(cluster.NewDatabase(b), "pool_max_conns=32")
	var urls []string
	var mu sync.Mutex
	var appends, delays, handled, feedDelays []time.Duration
	for range 2 {
		st, err := pgstoreOpen(dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		hub := feed.New(st, 0, 0)
		srv, err := server.New(st, server.Options{Insecure: true, Logger: slog.New(slog.DiscardHandler), Feed: hub,
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var acked sync.Map // "id rev" → time acknowledged
	var wg sync.WaitGroup
	for i := range dashboards {
		wg.Go(func() {
			pprof.Do(ctx, loadRole, func(ctx context.Context) { dashboard(ctx, urls[i%2], &acked, &mu, &delays) })
		})
	}
	for i := range streams {
		c, _ := remote.New(urls[i%2], remote.Options{})
		wg.Go(func() {
			pprof.Do(ctx, loadRole, func(ctx context.Context) {
				_ = c.Watch(ctx, ckpt.CursorNow, func(ch ckpt.Change) error {
					if t, ok := acked.Load(fmt.Sprintf("%s %d", ch.ID, ch.Rev)); ok {
						got := time.Since(t.(time.Time))
						mu.Lock()
						feedDelays = append(feedDelays, got)
						mu.Unlock()
					}
					return nil
				})
			})
		})
	}
	clients := []*remote.Store{}
	for _, u := range urls {
		c, _ := remote.New(u, remote.Options{})
		clients = append(clients, c)
	}
	// Every agent creates its checkpoint first (1,000 creations at once
	// are a start-up, not the steady state the goals are about).
	ids := make([]string, agents)
	var created sync.WaitGroup
	sem := make(chan struct{}, 64)
	for i := range agents {
		ids[i] = fmt.Sprintf("fleet/agent-%04d", i)
		created.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			title := ids[i]
			if _, err := clients[i%2].Append(ctx, ids[i], ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: ids[i]}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{}); err != nil {
				b.Error(err)
			}
		})
	}
	created.Wait()
	time.Sleep(time.Second) // the creations reach every page
	mu.Lock()
	handled = handled[:0] // the creations are not the steady state's appends
	mu.Unlock()
	cpu0, pg0 := processCPU(b), pgCPU(b)
	start := time.Now()
	end := start.Add(time.Duration(seconds * float64(time.Second)))
	b.ResetTimer()
	for i := range agents {
		wg.Go(func() {
			pprof.Do(ctx, loadRole, func(ctx context.Context) {
				agent(ctx, clients[i%2], ids[i], beatEvery, updateEvery, end, &acked, &mu, &appends)
			})
		})
	}
	time.Sleep(time.Until(end))
	cpu, pg := processCPU(b)-cpu0, pgCPU(b)-pg0
	time.Sleep(2 * time.Second) // the last updates reach the pages
	cancel()
	wg.Wait()
	b.StopTimer()
	if len(appends) == 0 || len(delays) == 0 {
		b.Fatalf("%d appends, %d deliveries measured", len(appends), len(delays))
	}
	b.ReportMetric(p99(appends), "append-p99-ms")
	b.ReportMetric(p99(delays), "browser-delay-p99-ms")
	mu.Lock()
	b.ReportMetric(p99(handled), "server-append-p99-ms")
	b.ReportMetric(p99(feedDelays), "feed-delay-p99-ms")
	b.ReportMetric(p50(delays), "browser-delay-p50-ms")
	mu.Unlock()
	b.ReportMetric(float64(len(appends))/seconds, "updates/s")
	b.ReportMetric(float64(agents)/beatEvery.Seconds(), "beats/s")
	b.ReportMetric(cpu.Seconds()/seconds, "go-cpu-cores")
	b.ReportMetric(pg.Seconds()/seconds, "pg-cpu-cores")
	b.Logf("%d updates, %d deliveries to dashboards measured over %.0f s at %gx", len(appends), len(delays), seconds, speedup)
}

// The profile labels (role=server, role=load) that split this process's
// CPU between the servers and the simulated fleet (go tool pprof
// -tagfocus role=server); what neither holds is the runtime's (the
// garbage collector) and the stores' own goroutines.
var (
	serverRole = pprof.Labels("role", "server")
	loadRole   = pprof.Labels("role", "load")
)

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
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)*99/100]) / float64(time.Millisecond)
}

// agent beats and updates its (created) checkpoint at its pace, each from
// a random phase, until end.
func agent(ctx context.Context, c *remote.Store, id string, beatEvery, updateEvery time.Duration, end time.Time, acked *sync.Map, mu *sync.Mutex, appends *[]time.Duration) {
	nextBeat := time.Now().Add(rand.N(beatEvery))
	nextUpdate := time.Now().Add(rand.N(updateEvery))
	rev := int64(1) // this agent is its checkpoint's only writer
	for n := 0; ; n++ {
		wake := end
		for _, t := range []time.Time{nextBeat, nextUpdate} {
			if t.Before(wake) {
				wake = t
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(wake)):
		}
		now := time.Now()
		if !now.Before(end) {
			return
		}
		if !now.Before(nextBeat) {
			_ = c.Beat(ctx, id, ckpt.Signal{})
			nextBeat = nextBeat.Add(beatEvery)
		}
		if !now.Before(nextUpdate) {
			step := "step " + strconv.Itoa(n)
			t0 := time.Now()
			// Stored before the write: a page may see it before the
			// writer hears its acknowledgement.
			acked.Store(fmt.Sprintf("%s %d", id, rev+1), t0)
			res, err := c.Append(ctx, id, ckpt.MustEvent(ckpt.EventUpdate, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Patch{CurrentStep: &step}), ckpt.AppendOptions{})
			if err == nil {
				done := time.Now()
				rev = res.Event.Seq
				mu.Lock()
				*appends = append(*appends, done.Sub(t0))
				mu.Unlock()
			}
			nextUpdate = nextUpdate.Add(updateEvery)
		}
	}
}

// dashboard follows the page's event stream as app.js does and records,
// for each update it receives, the delay since its append started.
func dashboard(ctx context.Context, url string, acked *sync.Map, mu *sync.Mutex, delays *[]time.Duration) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/ui/api/events", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer res.Body.Close()
	_ = feed.Read(res.Body, nil, func(ev feed.Event) error {
		if ev.Type != "change" {
			return nil
		}
		got := time.Now()
		c, ok := changeOfRow(ev.Data)
		if !ok {
			return nil
		}
		if t, ok := acked.Load(fmt.Sprintf("%s %d", c.ID, c.Rev)); ok {
			mu.Lock()
			*delays = append(*delays, got.Sub(t.(time.Time)))
			mu.Unlock()
		}
		return nil
	})
}

// changeOfRow reads the id and rev of the change a dashboard event carries
// ({cursor, kind, id, rev, …, row}: the change's members come before the
// row's) without decoding the row: a browser's JSON.parse is native code,
// so the simulated page should not cost what encoding/json does.
func changeOfRow(data string) (c struct {
	ID  string
	Rev int64
}, ok bool) {
	_, rest, ok := strings.Cut(data, `"id":"`)
	if !ok {
		return c, false
	}
	c.ID, rest, ok = strings.Cut(rest, `"`)
	if !ok {
		return c, false
	}
	_, rest, ok = strings.Cut(rest, `"rev":`)
	if !ok {
		return c, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		return c, false
	}
	rev, err := strconv.ParseInt(rest[:end], 10, 64)
	c.Rev = rev
	return c, err == nil
}
