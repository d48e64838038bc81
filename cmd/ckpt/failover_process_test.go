package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// TestFailover is docs/deploy.md's setup under load: two real `ckpt serve
// --pg` over a PostgreSQL primary with a synchronous standby, reached by a
// multi-host URL with target_session_attrs=read-write. 32 remote writers
// append through the two servers (each retries a retryable failure with
// the same idempotency key until acknowledged) and four change-feed
// clients follow /v1/changes. Mid-load the primary's machine is lost
// (every PostgreSQL process SIGKILLed) and one server dies with it (kill
// -9); while there is no primary the surviving server answers 503 with
// Retry-After and a new `ckpt serve` refuses to start, saying why; then
// the standby is promoted and the dead server restarted. Afterwards every
// acknowledged append is in the history exactly once, and every feed
// client saw each change exactly once, in order, across the failover: the
// ones on the dead server by resuming with Last-Event-ID.
//
// CKPT_FAILOVERS=N repeats the failover N times (default 1), rebuilding
// the lost node as the new standby between rounds (.ci/run documents it).
func TestFailover(t *testing.T) {
	rounds := 1
	if s := os.Getenv("CKPT_FAILOVERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CKPT_FAILOVERS=%q: want a number of failovers, 1 or more", s)
		}
		rounds = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(5+2*rounds)*time.Minute) // a bound on a hang, not a deadline on speed
	defer cancel()
	f := newFailover(t, ctx)
	defer f.stopWriters()
	for round := 1; round <= rounds; round++ {
		f.round(ctx, round, round < rounds)
	}
	f.stopWriters()
	total := checkHistories(t, f.ws, f.pgURL)
	f.step("histories checked")
	resumed := f.checkFeeds(total)
	f.step("feeds checked")
	f.report(rounds, total, resumed)
}

// failover is TestFailover's setup: the database pair, the two servers
// (a stays up, b is killed in each round), the writers and the feed
// clients.
type failover struct {
	t           *testing.T
	start       time.Time
	bin, pgURL  string
	ha          *pgtest.HA
	a, b        *serveProcess
	feeds       []*feedLog
	ws          []*haWriter
	stopWriters func()

	lastKill, lastPromote time.Time
	waiting               int // commits waiting for the standby at the kills
}

// perStep is how many writes each writer has acknowledged between two
// steps of a round.
const perStep = 15

func newFailover(t *testing.T, ctx context.Context) *failover {
	const writers, watchers = 32, 4
	f := &failover{t: t, start: time.Now()}
	f.bin = ckptBinary(t)
	f.step("built ckpt")
	f.ha = pgtest.NewHA(t)
	f.step("PostgreSQL primary and synchronous standby started")
	db, err := f.ha.CreateDatabase()
	if err != nil {
		t.Fatal(err)
	}
	f.pgURL = f.ha.URL(db)
	f.a = startServePG(t, f.bin, f.pgURL, "127.0.0.1:0", true)
	f.b = startServePG(t, f.bin, f.pgURL, "127.0.0.1:0", false)
	servers := []*serveProcess{f.a, f.b}
	f.step("two ckpt serve --pg started")
	f.feeds = make([]*feedLog, watchers)
	for i := range f.feeds {
		f.feeds[i] = &feedLog{}
		c := haClient(t, servers[i%2].url, f.a.admin, &http.Client{Transport: countResumes{http.DefaultTransport, &f.feeds[i].resumes}})
		go f.feeds[i].follow(ctx, c)
	}
	stop := make(chan struct{})
	f.ws = make([]*haWriter, writers)
	var wg sync.WaitGroup
	for i := range f.ws {
		f.ws[i] = &haWriter{id: fmt.Sprintf("ha/%02d", i), c: haClient(t, servers[i%2].url, f.a.admin, nil)}
		wg.Go(func() { f.ws[i].run(ctx, stop) })
	}
	f.stopWriters = sync.OnceFunc(func() { close(stop); wg.Wait() })
	return f
}

func (f *failover) step(what string) {
	f.t.Logf("%v: %s", time.Since(f.start).Round(time.Millisecond), what)
}

// round lets every writer make perStep writes, loses the primary's machine
// and server b, checks what is seen with no primary (first round),
// promotes the standby, restarts b, lets every writer make perStep more,
// and with rebuild makes the lost node the next standby.
func (f *failover) round(ctx context.Context, round int, rebuild bool) {
	t := f.t
	waitWriters(t, ctx, f.ws, time.Time{}, round*perStep)
	f.step(fmt.Sprintf("round %d: stalling the primary, then killing it and one server", round))
	f.lastKill = time.Now()
	n, err := f.ha.StallPrimary()
	if err != nil {
		t.Fatal(err)
	}
	f.waiting += n
	if err := f.ha.KillPrimary(); err != nil {
		t.Fatal(err)
	}
	f.b.cmd.Process.Kill()
	f.b.cmd.Wait()
	if round == 1 {
		checkNoPrimary(t, f.bin, f.a.url, f.a.admin, f.pgURL)
	}
	if err := f.ha.Promote(); err != nil {
		t.Fatal(err)
	}
	f.lastPromote = time.Now()
	f.step("standby promoted")
	*f.b = *startServePG(t, f.bin, f.pgURL, strings.TrimPrefix(f.b.url, "http://"), false)
	waitWriters(t, ctx, f.ws, f.lastPromote, perStep)
	f.step(fmt.Sprintf("every writer has %d acknowledged writes after the promotion", perStep))
	if rebuild {
		if err := f.ha.Rebuild(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkFeeds checks every feed client (see feedLog.check), and that those
// on server a never reconnected while those on b resumed; it returns the
// number of resuming requests.
func (f *failover) checkFeeds(total int) (resumed int64) {
	t := f.t
	for i, fl := range f.feeds {
		fl.wait(t, i, total)
	}
	time.Sleep(time.Second) // a repeat would arrive by now
	for i, fl := range f.feeds {
		fl.check(t, i, f.ws, total)
		n := fl.resumes.Load()
		resumed += n
		// Server a lived through every failover: its one store watch
		// reconnected to the new primary and caught up from the table,
		// so its streams never broke. b's streams died with it.
		if i%2 == 0 && n != 0 {
			t.Errorf("feed client %d, on the server that stayed up, reconnected %d times: its stream broke in the failover", i, n)
		}
		if i%2 == 1 && n == 0 {
			t.Errorf("feed client %d, on the server that was killed, never resumed with Last-Event-ID", i)
		}
	}
	return resumed
}

// report checks that the writes whose answer was lost were replayed, and
// logs the figures.
func (f *failover) report(rounds, total int, resumed int64) {
	t := f.t
	var gaps, sincePromote []time.Duration
	before, replayed := 0, 0
	for _, w := range f.ws {
		if w.err != nil {
			t.Errorf("%s: %v", w.id, w.err)
		}
		before += w.since(time.Time{}) - w.since(f.lastKill)
		replayed += w.replayed
		gaps = append(gaps, w.maxGap)
		sincePromote = append(sincePromote, w.firstAckAfter(f.lastPromote).Sub(f.lastPromote))
	}
	// Each commit that was waiting for the standby when the primary
	// died is on the promoted standby without its writer knowing: the
	// writer's retry must have been answered by a replay of its key.
	if replayed < f.waiting {
		t.Errorf("%d commits were waiting for the standby when the primary died, but only %d retries were answered by a replay", f.waiting, replayed)
	}
	slices.Sort(gaps)
	slices.Sort(sincePromote)
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.Logf("%d failover(s): %d appends acknowledged, 0 lost, 0 doubled (%d commits waiting for the standby at the kill, %d retries answered by replaying a write whose answer was lost); "+
		"%d changes written before the last kill, %d after, each seen once by %d clients (those on the killed server resumed with Last-Event-ID, %d requests; those on the other never reconnected); "+
		"primary killed to standby promoted %v (the test's checks); promotion to a writer's first acknowledgement: median %v, max %v; a writer's longest wait between acknowledgements: median %v, max %v",
		rounds, total, f.waiting, replayed, before, total-before, len(f.feeds), resumed, ms(f.lastPromote.Sub(f.lastKill)),
		ms(sincePromote[len(sincePromote)/2]), ms(sincePromote[len(sincePromote)-1]), ms(gaps[len(gaps)/2]), ms(gaps[len(gaps)-1]))
}

// startServePG runs `ckpt serve --pg pgURL --addr addr` and waits until it
// listens; first: this start creates the admin token and prints it.
func startServePG(t *testing.T, bin, pgURL, addr string, first bool) *serveProcess {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", addr, "--pg", pgURL)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout syncbuf.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rd := bufio.NewReader(errPipe)
	serving := regexp.MustCompile(`ckpt serve: serving (http://127\.0\.0\.1:\d+) `)
	var said strings.Builder
	for {
		line, err := rd.ReadString('\n')
		said.WriteString(line)
		if err != nil {
			t.Fatalf("ckpt serve --pg ended before listening: %v\n%s", err, said.String())
		}
		if m := serving.FindStringSubmatch(line); m != nil {
			go io.Copy(io.Discard, rd)
			p := &serveProcess{cmd: cmd, url: m[1], stdout: &stdout}
			token := regexp.MustCompile(`ckpt_[0-9a-f]+_[0-9a-f]+`)
			for deadline := time.Now().Add(time.Minute); first && p.admin == "" && time.Now().Before(deadline); {
				if p.admin = token.FindString(stdout.String()); p.admin == "" {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if first && p.admin == "" {
				t.Fatalf("the first ckpt serve --pg printed no admin token: %q", stdout.String())
			}
			return p
		}
	}
}

// countResumes is a transport that counts the change-feed requests that
// carry Last-Event-ID.
type countResumes struct {
	http.RoundTripper
	n *atomic.Int64
}

func (c countResumes) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == httpapi.PathChanges && r.Header.Get(httpapi.HeaderLastEventID) != "" {
		c.n.Add(1)
	}
	return c.RoundTripper.RoundTrip(r)
}

func haClient(t *testing.T, url, token string, hc *http.Client) *remote.Store {
	t.Helper()
	c, err := remote.New(url, remote.Options{Token: token, HTTPClient: hc, Backoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// haWriter appends to its own checkpoint through one server, each event
// with its own key, retrying a retryable failure with the same key until
// it is acknowledged: what a client that must not lose a write does.
type haWriter struct {
	id string
	c  *remote.Store

	mu       sync.Mutex
	acks     []time.Time // when each write was acknowledged
	maxGap   time.Duration
	replayed int // acknowledgements of a retry whose first try had committed
	err      error
}

func (w *haWriter) run(ctx context.Context, stop <-chan struct{}) {
	for j := 0; ; j++ {
		select {
		case <-stop:
			return
		default:
		}
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: w.id}, ckpt.Note{Text: fmt.Sprint(j)})
		if j == 0 {
			e = ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: w.id}, ckpt.Created{})
		}
		e.Key = fmt.Sprintf("%s-%d", w.id, j)
		for {
			r, err := w.c.Append(ctx, w.id, e, ckpt.AppendOptions{})
			if err == nil && r.Event.Seq != int64(j+1) {
				err = fmt.Errorf("key %s acknowledged as seq %d, want %d (a retry applied twice?)", e.Key, r.Event.Seq, j+1)
			}
			if err == nil {
				w.ack(time.Now(), r.Replayed)
				break
			}
			if !ckpt.Retryable(err) || ctx.Err() != nil {
				w.mu.Lock()
				w.err = fmt.Errorf("append %d: %w", j, err)
				w.mu.Unlock()
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

func (w *haWriter) ack(at time.Time, replayed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if replayed {
		w.replayed++
	}
	if n := len(w.acks); n > 0 {
		w.maxGap = max(w.maxGap, at.Sub(w.acks[n-1]))
	}
	w.acks = append(w.acks, at)
}

// since counts the acknowledgements after t.
func (w *haWriter) since(t time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, a := range w.acks {
		if a.After(t) {
			n++
		}
	}
	return n
}

func (w *haWriter) firstAckAfter(t time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range w.acks {
		if a.After(t) {
			return a
		}
	}
	return t
}

// waitWriters waits until every writer has n acknowledgements after t.
func waitWriters(t *testing.T, ctx context.Context, ws []*haWriter, after time.Time, n int) {
	t.Helper()
	for {
		low := ws[0]
		for _, w := range ws {
			if w.since(after) < low.since(after) {
				low = w
			}
			w.mu.Lock()
			err := w.err
			w.mu.Unlock()
			if err != nil {
				t.Fatalf("%s: %v", w.id, err)
			}
		}
		if low.since(after) >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s has %d acknowledged writes, want %d: %v", low.id, low.since(after), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// checkNoPrimary checks what clients and operators see while no server
// takes writes: an append gets 503 with Retry-After at once (no hang),
// and a new server refuses to start, saying that none of the hosts takes
// writes.
func checkNoPrimary(t *testing.T, bin, url, token, pgURL string) {
	t.Helper()
	e := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{})
	body, _ := json.Marshal(httpapi.WireEvent(e))
	req, _ := http.NewRequest(http.MethodPost, url+httpapi.PathEvents+"ha/probe", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("an append with no primary got no answer: %v", err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("an append with no primary: %s, Retry-After %q, %s; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"), msg)
	}
	out, err := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--pg", pgURL).CombinedOutput()
	t.Logf("ckpt serve with no primary: %s", out)
	if err == nil || !strings.Contains(string(out), "takes writes") || !strings.Contains(string(out), "promote") {
		t.Errorf("ckpt serve with no primary: %v\n%s\nwant a refusal saying no host takes writes and to promote the standby", err, out)
	}
}

// checkHistories checks in the database that each writer's history holds
// exactly its acknowledged writes, each once, in order; it returns their
// number.
func checkHistories(t *testing.T, ws []*haWriter, pgURL string) int {
	t.Helper()
	ctx := context.Background()
	st, err := pgstore.Open(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	total := 0
	for _, w := range ws {
		h, err := st.History(ctx, w.id, 0, 0)
		if err != nil {
			t.Fatalf("%s: %v", w.id, err)
		}
		if len(h) != len(w.acks) {
			t.Errorf("%s: the history holds %d events, %d were acknowledged", w.id, len(h), len(w.acks))
		}
		for i, e := range h {
			if want := fmt.Sprintf("%s-%d", w.id, i); e.Key != want || e.Seq != int64(i+1) {
				t.Errorf("%s: event %d is seq %d key %s, want seq %d key %s", w.id, i, e.Seq, e.Key, i+1, want)
			}
		}
		total += len(w.acks)
	}
	return total
}

// feedLog is one change-feed client: a remote.Watch over /v1/changes
// from the feed's start, which reconnects by itself with Last-Event-ID.
type feedLog struct {
	mu      sync.Mutex
	changes []ckpt.Change
	err     error
	resumes atomic.Int64 // requests with Last-Event-ID
}

func (f *feedLog) follow(ctx context.Context, c *remote.Store) {
	err := c.Watch(ctx, "", func(ch ckpt.Change) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.changes = append(f.changes, ch)
		return nil
	})
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

func (f *feedLog) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.changes)
}

// wait waits until the client has seen total changes.
func (f *feedLog) wait(t *testing.T, i, total int) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for f.len() < total {
		select {
		case <-deadline:
			f.mu.Lock()
			t.Errorf("feed client %d saw %d of %d changes in two minutes (%v)", i, len(f.changes), total, f.err)
			f.mu.Unlock()
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// check checks that the client saw total changes, each writer's
// checkpoint as revisions 1, 2, … with none missing or repeated.
func (f *feedLog) check(t *testing.T, i int, ws []*haWriter, total int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.changes) != total {
		t.Errorf("feed client %d saw %d changes, want %d", i, len(f.changes), total)
	}
	next := map[string]int64{}
	for _, c := range f.changes {
		if c.Kind != ckpt.ChangeEvent || c.Rev != next[c.ID]+1 {
			t.Errorf("feed client %d: %s change %+v after revision %d: a gap or a repeat", i, c.ID, c, next[c.ID])
		}
		next[c.ID] = c.Rev
	}
	for _, w := range ws {
		if next[w.id] != int64(len(w.acks)) {
			t.Errorf("feed client %d: %s ends at revision %d, the history at %d", i, w.id, next[w.id], len(w.acks))
		}
	}
}
