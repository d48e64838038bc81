package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/feed"
	"github.com/ckpt-dev/ckpt/remote"
)

// fleetResult is what TestFleetLoadHelper measured, sent to
// BenchmarkFleet1000 as one JSON line (latencies in milliseconds).
type fleetResult struct {
	Appends, Deliveries                                 int
	AppendP99, BrowserP99, BrowserP50, FeedP99, BeatP99 float64
	BeatsPerSecond, Speedup, Seconds, CPUSeconds        float64
	HTTPFloorP99                                        float64 // a request that does nothing, through the same processes meanwhile
	Slow, Sched                                         string  // where the slow updates' time went; this process's scheduling
}

// TestFleetLoadHelper is BenchmarkFleet1000's fleet, in two processes
// as on two sets of machines: with CKPT_FLEET_LOAD_URLS (the two
// servers) and CKPT_FLEET_LOAD_ROLE "pages" it opens the dashboards (see
// fleetPages); with "agents" it opens the /v1/changes streams, creates
// every agent's checkpoint, prints "ready", runs the agents for
// CKPT_FLEET_SECONDS and prints "result" and its figures as JSON. Without
// the variables it does nothing.
func TestFleetLoadHelper(t *testing.T) {
	urls := strings.Fields(os.Getenv("CKPT_FLEET_LOAD_URLS"))
	switch os.Getenv("CKPT_FLEET_LOAD_ROLE") {
	case "pages":
		fleetPages(t, urls)
	case "agents":
		fleetAgents(t, urls)
	default:
		t.Skip("the fleet of BenchmarkFleet1000")
	}
}

func fleetAgents(t *testing.T, urls []string) {
	const agents, streams = 1000, 200
	speedup, seconds := envFloat("CKPT_FLEET_SPEEDUP", 3), envFloat("CKPT_FLEET_SECONDS", 60)
	beatEvery := time.Duration(float64(5*time.Second) / speedup)
	if os.Getenv("CKPT_FLEET_BEATS") == "0" { // the diagnosis of docs/design.md: updates only
		beatEvery = 24 * time.Hour
	}
	updateEvery := time.Duration(float64(30*time.Second) / speedup)
	var m fleetMeasures
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range streams {
		c, _ := remote.New(urls[i%2], remote.Options{})
		wg.Go(func() {
			_ = c.Watch(ctx, ckpt.CursorNow, func(ch ckpt.Change) error {
				if d, ok := m.since(ch.ID, ch.Rev); ok {
					m.add(&m.feed, d)
				}
				return nil
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
				t.Error(err)
			}
		})
	}
	created.Wait()
	time.Sleep(time.Second) // the creations reach every page
	fmt.Println("ready")
	sched0, cpu0 := readSched(), processCPU(t)
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for i := range agents {
		wg.Go(func() { agent(ctx, clients[i%2], ids[i], beatEvery, updateEvery, end, &m) })
	}
	wg.Go(func() { probeHTTP(ctx, urls, end, &m) })
	time.Sleep(time.Until(end))
	cpu, sched := processCPU(t)-cpu0, readSched().since(sched0)
	time.Sleep(2 * time.Second) // the last updates reach the streams
	cancel()
	wg.Wait()
	m.mu.Lock()
	defer m.mu.Unlock()
	out, _ := json.Marshal(fleetResult{
		Appends: len(m.appends), AppendP99: p99(m.appends), FeedP99: p99(m.feed), BeatP99: p99(m.beats),
		HTTPFloorP99:   p99(m.probes),
		BeatsPerSecond: float64(agents) / beatEvery.Seconds(), Speedup: speedup, Seconds: seconds, CPUSeconds: cpu.Seconds(),
		Slow: slowest(m.traces), Sched: sched,
	})
	fmt.Println("result", string(out))
}

// fleetPages opens the dashboards, half on each server, prints "ready"
// once every page's stream is open, and records for each update a page
// receives the delay since its append started (the time its agent wrote
// into the step, "@t" and Unix nanoseconds: one clock, one machine).
// Told "start" and then "window FROM TO" (Unix nanoseconds) on its
// input, it prints "result" and the figures of the updates whose append
// started in the window, with its CPU between the two.
func fleetPages(t *testing.T, urls []string) {
	const dashboards = 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu     sync.Mutex
		starts []int64
		delays []time.Duration
		open   sync.WaitGroup
	)
	open.Add(dashboards)
	for i := range dashboards {
		go dashboard(ctx, urls[i%2], open.Done, func(start int64, d time.Duration) {
			mu.Lock()
			starts, delays = append(starts, start), append(delays, d)
			mu.Unlock()
		})
	}
	open.Wait()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	var cpu0 time.Duration
	var sched0 schedSample
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 1 && f[0] == "start" {
			cpu0, sched0 = processCPU(t), readSched()
			continue
		}
		if len(f) != 3 || f[0] != "window" {
			continue
		}
		cpu, sched := processCPU(t)-cpu0, readSched().since(sched0)
		from, _ := strconv.ParseInt(f[1], 10, 64)
		to, _ := strconv.ParseInt(f[2], 10, 64)
		var got []time.Duration
		mu.Lock()
		for i, s := range starts {
			if s >= from && s < to {
				got = append(got, delays[i])
			}
		}
		mu.Unlock()
		r := fleetResult{Deliveries: len(got), CPUSeconds: cpu.Seconds(), Sched: sched}
		if len(got) > 0 {
			r.BrowserP99, r.BrowserP50 = p99(got), p50(got)
		}
		out, _ := json.Marshal(r)
		fmt.Println("result", string(out))
		return
	}
}

// fleetMeasures collects the load's timings.
type fleetMeasures struct {
	acked sync.Map // "id rev" → when its append started

	mu                   sync.Mutex
	appends, feed, beats []time.Duration
	probes               []time.Duration // probeHTTP's
	traces               []updateTrace
}

func (m *fleetMeasures) add(to *[]time.Duration, d time.Duration) {
	m.mu.Lock()
	*to = append(*to, d)
	m.mu.Unlock()
}

// since returns the time since the append of revision rev of id started,
// when one of the agents made it.
func (m *fleetMeasures) since(id string, rev int64) (time.Duration, bool) {
	t, ok := m.acked.Load(id + " " + strconv.FormatInt(rev, 10))
	if !ok {
		return 0, false
	}
	return time.Since(t.(time.Time)), true
}

// updateTrace is where one update's time went, from the client's side:
// getting a connection, from the request written to the answer's first
// byte (the network and the server), and reading the answer.
type updateTrace struct {
	total, conn, server, read time.Duration
	fresh                     bool // a new connection was dialled
}

// traced returns ctx that records the request's milestones in tr, and a
// function that completes tr when the call returns.
func traced(ctx context.Context, tr *updateTrace) (context.Context, func()) {
	t0 := time.Now()
	var gotConn, wrote, first time.Time
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(i httptrace.GotConnInfo) { gotConn, tr.fresh = time.Now(), !i.Reused },
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
		GotFirstResponseByte: func() { first = time.Now() },
	})
	return ctx, func() {
		done := time.Now()
		tr.total = done.Sub(t0)
		if !gotConn.IsZero() && !wrote.IsZero() && !first.IsZero() {
			tr.conn, tr.server, tr.read = gotConn.Sub(t0), first.Sub(wrote), done.Sub(first)
		}
	}
}

// slowest says where the time of the slowest 1% of traces went, on
// average.
func slowest(trs []updateTrace) string {
	if len(trs) == 0 {
		return "none"
	}
	s := slices.Clone(trs)
	slices.SortFunc(s, func(a, b updateTrace) int { return int(b.total - a.total) })
	s = s[:max(1, len(s)/100)]
	var sum updateTrace
	fresh := 0
	for _, tr := range s {
		sum.total += tr.total
		sum.conn += tr.conn
		sum.server += tr.server
		sum.read += tr.read
		if tr.fresh {
			fresh++
		}
	}
	n := time.Duration(len(s))
	return fmt.Sprintf("%d updates, mean %v: getting a connection %v (%d dialled), request written to first byte %v, reading the answer %v",
		len(s), (sum.total / n).Round(time.Millisecond), (sum.conn / n).Round(time.Millisecond), fresh,
		(sum.server / n).Round(time.Millisecond), (sum.read / n).Round(time.Millisecond))
}

// agent beats and updates its (created) checkpoint at its pace, each from
// a random phase, until end.
func agent(ctx context.Context, c *remote.Store, id string, beatEvery, updateEvery time.Duration, end time.Time, m *fleetMeasures) {
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
			t0 := time.Now()
			if c.Beat(ctx, id, ckpt.Signal{}) == nil {
				m.add(&m.beats, time.Since(t0))
			}
			nextBeat = nextBeat.Add(beatEvery)
		}
		if !now.Before(nextUpdate) {
			var tr updateTrace
			tctx, done := traced(ctx, &tr)
			// Stored before the write: a stream may see it before the
			// writer hears its acknowledgement; the pages read it in the step.
			t0 := time.Now()
			m.acked.Store(id+" "+strconv.FormatInt(rev+1, 10), t0)
			step := "step " + strconv.Itoa(n) + " @t" + strconv.FormatInt(t0.UnixNano(), 10)
			res, err := c.Append(tctx, id, ckpt.MustEvent(ckpt.EventUpdate, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Patch{CurrentStep: &step}), ckpt.AppendOptions{})
			done()
			if err == nil {
				rev = res.Event.Seq
				m.mu.Lock()
				m.appends = append(m.appends, tr.total)
				m.traces = append(m.traces, tr)
				m.mu.Unlock()
			}
			nextUpdate = nextUpdate.Add(updateEvery)
		}
	}
}

// dashboard follows the page's event stream as app.js does, calls opened
// once the stream is open (or failed), and got with each update's start
// (read from its step) and its delay since.
func dashboard(ctx context.Context, url string, opened func(), got func(start int64, d time.Duration)) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/ui/api/events", nil)
	res, err := http.DefaultClient.Do(req)
	opened()
	if err != nil {
		return
	}
	defer res.Body.Close()
	_ = feed.Read(res.Body, nil, func(ev feed.Event) error {
		if ev.Type != "change" {
			return nil
		}
		now := time.Now()
		if start, ok := startOfRow(ev.Data); ok {
			got(start, now.Sub(time.Unix(0, start)))
		}
		return nil
	})
}

// startOfRow reads the start of the update a dashboard event carries
// (its step's "@t" and Unix nanoseconds) without decoding the row: a
// browser's JSON.parse is native code, so the simulated page should not
// cost what encoding/json does.
func startOfRow(data string) (int64, bool) {
	_, rest, ok := strings.Cut(data, "@t")
	if !ok {
		return 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(rest[:end], 10, 64)
	return n, err == nil
}

// probeHTTP is the fleet's floor: every 20 ms until end, a request that
// does no work in the server (GET /v1/info, alternating servers), timed
// as the agents' are: what any request through these processes and this
// machine's scheduler took meanwhile.
func probeHTTP(ctx context.Context, urls []string, end time.Time, m *fleetMeasures) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; time.Now().Before(end); i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t0 := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, urls[i%len(urls)]+"/v1/info", nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			m.add(&m.probes, time.Since(t0))
		}
	}
}
