package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
)

// BenchmarkWritersWithOpenDashboards measures what open dashboards cost
// the agents writing, as deployed: a dashboard server in a process of its
// own over a local filestore (as `ckpt serve` runs), 100 dashboards in a
// third process, each doing over real HTTP what app.js does (read the
// overview, follow the event stream, refresh a row the change does not
// carry, refresh the counts at most once a second), and the writer in this
// process, appending durably to the store as `ckpt update` does. Rounds
// alternate n appends alone and n appends with the 100 dashboards open;
// each round reports its p50 and throughput ratios (watched over alone),
// and the benchmark their medians: x-p50 and x-throughput (alone over
// watched, so above 1 is slower), pooled over all rounds too. Every
// dashboard must have seen the last change of each round (within 30 s).
//
// The sub-benchmarks: rows-in-feed is the page as it is (changes carry
// their row); fetch-each-row is a page that fetches the row of every
// change, as the page did before (such pages may fall behind: after 5 s
// the round's log says so, and it goes on).
//
//	go test -run '^$' -bench OpenDashboards -benchtime 1000x ./web
//
// All three processes share the machine's cores. The dashboards stand for
// browsers, which in a deployment run on other machines: their process
// runs at nice 19 and reads each change's fields without decoding its row,
// so it takes what CPU the server and the writer leave.
func BenchmarkWritersWithOpenDashboards(b *testing.B) {
	for _, mode := range []string{"rows-in-feed", "fetch-each-row"} {
		b.Run(mode, func(b *testing.B) { benchDashboards(b, mode == "fetch-each-row") })
	}
}

func benchDashboards(b *testing.B, fetchRows bool) {
	const pages, seeded, rounds = 100, 200, 4
	dir := b.TempDir() + "/.ckpt"
	st, err := filestore.Init(dir, filestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	seedMany(b, st, seeded)
	url := startHelper(b, "server", map[string]string{"CKPT_BENCH_STORE": dir}).first
	ctx := context.Background()
	i := 0
	write := func() {
		e := ckpt.MustEvent(ckpt.EventNote, time.Now(), ckpt.Actor{Agent: "bench"}, ckpt.Note{Text: "n"})
		if _, err := st.Append(ctx, fmt.Sprintf("fleet/%06d", i%seeded), e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	n := max(b.N, 50)
	var p50s, tputs []float64
	var allAlone, allWatched []time.Duration
	for r := range rounds {
		// ABBA: odd rounds measure with the dashboards first, so a drift
		// of the machine's load does not favour one side.
		var alone, watched []time.Duration
		var aloneTotal, watchedTotal time.Duration
		if r%2 == 0 {
			alone, aloneTotal = timeWrites(n, write)
		}
		dash := startHelper(b, "dashboards", map[string]string{
			"CKPT_BENCH_URL": url, "CKPT_BENCH_PAGES": strconv.Itoa(pages), "CKPT_BENCH_FETCH_ROWS": strconv.FormatBool(fetchRows)})
		watched, watchedTotal = timeWrites(n, write)
		head, err := st.Head(ctx)
		if err != nil {
			b.Fatal(err)
		}
		report := waitSeen(b, dash, head, pages, !fetchRows)
		dash.stop()
		if r%2 == 1 {
			alone, aloneTotal = timeWrites(n, write)
		}
		p50s = append(p50s, float64(median(watched))/float64(median(alone)))
		tputs = append(tputs, float64(watchedTotal)/float64(aloneTotal))
		allAlone, allWatched = append(allAlone, alone...), append(allWatched, watched...)
		b.Logf("round %d: p50 %v alone, %v with %d dashboards (%.2fx); %d appends in %v alone, %v watched (%.2fx); dashboards: %s",
			r+1, median(alone), median(watched), pages, p50s[r], n, aloneTotal, watchedTotal, tputs[r], report)
	}
	slices.Sort(p50s)
	slices.Sort(tputs)
	b.ReportMetric(p50s[len(p50s)/2], "x-p50")
	b.ReportMetric(float64(median(allWatched))/float64(median(allAlone)), "x-p50-pooled")
	b.ReportMetric(tputs[len(tputs)/2], "x-throughput")
	b.ReportMetric(float64(median(allAlone).Microseconds()), "p50-us-alone")
}

// median returns the median of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// timeWrites calls write n times and returns each call's time and the
// total.
func timeWrites(n int, write func()) (ds []time.Duration, total time.Duration) {
	ds = make([]time.Duration, n)
	t0 := time.Now()
	for k := range ds {
		t := time.Now()
		write()
		ds[k] = time.Since(t)
	}
	return ds, time.Since(t0)
}

// waitSeen waits until the dashboards report that every page saw head,
// and returns their report. Pages that fetch every row may fall behind for
// good: unless must, after 5 seconds their report says how far.
func waitSeen(b *testing.B, h *helper, head string, pages int, must bool) string {
	deadline := time.Now().Add(30 * time.Second)
	if !must {
		deadline = time.Now().Add(5 * time.Second)
	}
	for {
		time.Sleep(500 * time.Millisecond)
		report := h.report()
		if strings.HasPrefix(report, fmt.Sprintf("all %d pages at %s ", pages, head)) {
			return report
		}
		if time.Now().After(deadline) {
			if !must {
				return "behind after 5 s: " + report
			}
			b.Fatalf("the dashboards did not all reach the last change %s: %s", head, report)
		}
	}
}

// helper is this test binary run as a helper process of some role
// (TestDashboardBenchHelper).
type helper struct {
	cmd   *exec.Cmd
	lines *bufio.Scanner
	first string // the first line it printed
	once  sync.Once
}

// startHelper starts a helper of role and waits for its first line.
func startHelper(b *testing.B, role string, env map[string]string) *helper {
	args := []string{os.Args[0], "-test.run=^TestDashboardBenchHelper$"}
	if role == "dashboards" {
		// The dashboards stand for browsers on other machines: they
		// take what CPU the server and the writer leave.
		if nice, err := exec.LookPath("nice"); err == nil {
			args = append([]string{nice, "-n", "19"}, args...)
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "CKPT_BENCH_ROLE="+role)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	h := &helper{cmd: cmd, lines: bufio.NewScanner(out)}
	b.Cleanup(h.stop)
	if !h.lines.Scan() {
		h.stop()
		b.Fatalf("the %s helper printed nothing", role)
	}
	h.first = h.lines.Text()
	return h
}

// report asks the helper for its report (SIGUSR1) and returns it.
func (h *helper) report() string {
	h.cmd.Process.Signal(syscall.SIGUSR1)
	if !h.lines.Scan() {
		return "no report"
	}
	return h.lines.Text()
}

// stop ends the helper (SIGTERM) and waits for it.
func (h *helper) stop() {
	h.once.Do(func() {
		h.cmd.Process.Signal(syscall.SIGTERM)
		h.cmd.Wait()
	})
}

// TestDashboardBenchHelper is not a test: it is the server or the
// dashboards of BenchmarkWritersWithOpenDashboards, when run as a helper
// process (CKPT_BENCH_ROLE set).
func TestDashboardBenchHelper(t *testing.T) {
	switch os.Getenv("CKPT_BENCH_ROLE") {
	case "":
		t.Skip("a helper process of BenchmarkWritersWithOpenDashboards")
	case "server":
		serveForBench(t)
	case "dashboards":
		openForBench(t)
	}
}

// serveForBench serves the dashboard over the store at CKPT_BENCH_STORE
// on a loopback port, prints its URL, and serves until SIGTERM.
func serveForBench(t *testing.T) {
	st, err := filestore.Open(os.Getenv("CKPT_BENCH_STORE"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: New(Options{Store: st}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	fmt.Printf("http://%s\n", ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	srv.Shutdown(ctx)
}

// openForBench opens CKPT_BENCH_PAGES dashboards on CKPT_BENCH_URL, each
// doing what app.js does, prints "ready", and on each SIGUSR1 prints how
// many pages have seen which last change ("all N pages at CURSOR" when
// they agree), until SIGTERM.
func openForBench(t *testing.T) {
	pages, _ := strconv.Atoi(os.Getenv("CKPT_BENCH_PAGES"))
	fetchRows, _ := strconv.ParseBool(os.Getenv("CKPT_BENCH_FETCH_ROWS"))
	base := os.Getenv("CKPT_BENCH_URL")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * pages}}
	last := make([]atomic.Value, pages)
	var requests atomic.Int64
	var ready sync.WaitGroup
	for p := range pages {
		ready.Add(1)
		go func() {
			pg := benchPage{client: client, base: base, fetchRows: fetchRows, requests: &requests}
			if err := pg.run(ctx, ready.Done, func(cursor string) { last[p].Store(cursor) }); err != nil && ctx.Err() == nil {
				fmt.Fprintln(os.Stderr, "dashboard:", err)
			}
		}()
	}
	ready.Wait()
	fmt.Println("ready")
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGUSR1)
	for s := range sig {
		if s == syscall.SIGTERM {
			return
		}
		at := map[string]int{}
		for p := range last {
			c, _ := last[p].Load().(string)
			at[c]++
		}
		if len(at) == 1 {
			for c, k := range at {
				fmt.Printf("all %d pages at %s after %d requests\n", k, c, requests.Load())
			}
		} else {
			fmt.Printf("pages at %d different changes after %d requests\n", len(at), requests.Load())
		}
	}
}

// benchPage is one open dashboard, as app.js drives it.
type benchPage struct {
	client    *http.Client
	base      string
	fetchRows bool // fetch every change's row, ignoring the one it carries
	requests  *atomic.Int64
}

func (pg *benchPage) get(ctx context.Context, path string, into any) error {
	pg.requests.Add(1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, pg.base+path, nil)
	res, err := pg.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, res.Status)
	}
	if into == nil {
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	return json.NewDecoder(res.Body).Decode(into)
}

// run reads the overview, opens the event stream from its cursor, calls
// ready once the stream is open and seen with each change's cursor.
func (pg *benchPage) run(ctx context.Context, ready func(), seen func(cursor string)) error {
	var out overviewOut
	if err := pg.get(ctx, "/ui/api/overview", &out); err != nil {
		ready()
		return err
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, pg.base+"/ui/api/events?from="+out.Cursor, nil)
	res, err := pg.client.Do(req)
	ready()
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var countsDue atomic.Bool // a counts refresh is scheduled (refreshCountsSoon)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || !strings.HasPrefix(data, `{"cursor"`) {
			continue
		}
		// The fields a page reads, without decoding the row: this
		// process stands for browsers, whose work in a deployment is not
		// on the server's machine.
		cursor, id, hasRow := changeFields(data)
		if cursor == "" {
			return fmt.Errorf("a change event without its cursor: %s", data)
		}
		if countsDue.CompareAndSwap(false, true) {
			time.AfterFunc(time.Second, func() {
				countsDue.Store(false)
				_ = pg.get(ctx, "/ui/api/overview?limit=1", nil)
			})
		}
		// The rows the page shows (the first 100) refresh, here one
		// request at a time per page (a browser allows six per host).
		if (pg.fetchRows || !hasRow) && strings.Contains(data, `"kind":"event"`) && id < "fleet/000100" {
			if err := pg.get(ctx, "/ui/api/row?id="+id, nil); err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
		}
		seen(cursor)
	}
	return sc.Err()
}

// changeFields returns the cursor and ID of a change event's data, and
// whether it carries a row, as laid out by json.Marshal of changeOut.
func changeFields(data string) (cursor, id string, hasRow bool) {
	field := func(name string) string {
		_, rest, ok := strings.Cut(data, `"`+name+`":"`)
		if !ok {
			return ""
		}
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}
	return field("cursor"), field("id"), strings.Contains(data, `,"row":{`)
}
