package pgstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// BenchmarkPeer compares, in one run against one PostgreSQL (the package's
// throwaway cluster, durable defaults), at 1, 16 and 64 concurrent writers:
//
//   - floor: one INSERT+COMMIT per write (an autocommitted single-row
//     INSERT of 200 bytes) by N pgx connections: what any durable write
//     costs at least;
//   - stores: ckpt with one Store per writer (N agent processes with --pg,
//     or N long-lived `ckpt mcp`, writing directly: --no-keeper), each
//     appending to its own checkpoint;
//   - shared: ckpt with one Store shared by the N writers (ckpt serve --pg);
//   - keeper: N writers each with its own connection (a keeper.Client, as
//     N long-lived `ckpt mcp` or agent commands have) to one keeper, in
//     this process, serving one shared Store (peer_keeper_bench_test.go):
//     its client CPU is the clients' and the keeper's together;
//   - langgraph: LangGraph.js's PostgresSaver.put
//     (@langchain/langgraph-checkpoint-postgres) by N concurrent writers
//     in one node process, each on its own thread, when CKPT_PEER_LANGGRAPH
//     names an npm prefix holding it (bench/peer installs it and sets it).
//
// b.N is the writes each writer makes per round (16/N times as many below
// 16 writers); the contenders run one after the other in CKPT_PEER_ROUNDS
// rounds (default 3), interleaved so
// that a change of the machine's load falls on all of them. Each reports
// its rate as a ratio to the floor's over the same rounds (x/floor),
// the server's CPU per write, the client's CPU per write and, for the Go
// contenders, the bytes the client allocated per write (a figure the
// machine's load does not move), the WAL the server wrote per write
// (nor does it move that), and the load average. The whole comparison:
//
//	bench/peer
//
// which is go test -run '^$' -bench Peer -benchtime 40x ./pgstore with
// LangGraph installed (CKPT_PEER_WRITERS=1,16 picks writer counts;
// CKPT_PEER_ONLY=keeper,shared runs the floor and those contenders only).
func BenchmarkPeer(b *testing.B) {
	counts := []int{1, 16, 64}
	if v := os.Getenv("CKPT_PEER_WRITERS"); v != "" {
		counts = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("CKPT_PEER_WRITERS=%q: want writer counts like 1,16,64", v)
			}
			counts = append(counts, n)
		}
	}
	for _, n := range counts {
		b.Run(fmt.Sprintf("writers=%d", n), func(b *testing.B) { benchPeer(b, n) })
	}
}

// contender is one way of writing, set up afresh for each round (so that
// only one holds connections at a time) and then timed.
type contender struct {
	name string
	// setup prepares a round and returns its timed part (perWriter writes
	// by each of the n writers) and what ends the round. A timed part may
	// measure its own client CPU (another process): then it returns it.
	setup func(b *testing.B, n int) (run func(perWriter int) (clientCPU time.Duration, err error), teardown func())

	writes             int
	elapsed            time.Duration
	serverCPU, cpuSelf time.Duration
	allocated          uint64 // bytes this process allocated (not for another process's contender)
	wal                int64  // bytes of WAL the server wrote meanwhile
}

// walPosition is the server's current WAL insert position in bytes, read
// outside the timed parts (its query is not the contenders' CPU), over a
// pool or a connection.
func walPosition(b *testing.B, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) int64 {
	var pos int64
	if err := db.QueryRow(context.Background(), "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8").Scan(&pos); err != nil {
		b.Fatal(err)
	}
	return pos
}

func benchPeer(b *testing.B, n int) {
	ctx := context.Background()
	s, dsn := openStore(b)
	s.Close()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close() // reads the WAL position around each timed part
	if _, err := pool.Exec(ctx, "CREATE TABLE floor (w int, i int, body text)"); err != nil {
		b.Fatal(err)
	}
	var batched batchCount
	contenders := []*contender{
		{name: "floor", setup: peerFloor(dsn)},
		{name: "stores", setup: peerStores(dsn, true, nil)},
		{name: "shared", setup: peerStores(dsn, false, &batched)},
		{name: "keeper", setup: peerKeeper(dsn)},
	}
	var only []string // CKPT_PEER_ONLY's names, nil for every contender
	if v := os.Getenv("CKPT_PEER_ONLY"); v != "" {
		only = strings.Split(v, ",")
		contenders = pickContenders(contenders, only)
	}
	switch prefix := os.Getenv("CKPT_PEER_LANGGRAPH"); {
	case prefix == "":
		b.Log("LangGraph left out: CKPT_PEER_LANGGRAPH is not set (bench/peer sets it)")
	case only != nil && !slices.Contains(only, "langgraph"):
		b.Log("LangGraph left out: CKPT_PEER_ONLY does not name it")
	default:
		lg, stop := peerLangGraph(b, dsn, prefix, n)
		defer stop()
		contenders = append(contenders, &contender{name: "langgraph", setup: lg})
	}
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("CKPT_PEER_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	// Fewer writers write more each, so that every round has at least 16
	// × b.N writes: one stall (a checkpoint's fsyncs) must not be a
	// contender's whole round at one writer.
	perWriter := b.N * max(1, 16/n)
	load := loadAverage()
	b.ResetTimer()
	for range rounds {
		for _, c := range contenders {
			run, teardown := c.setup(b, n)
			var (
				cpu        cpuUse
				mem0, mem1 runtime.MemStats
			)
			wal0 := walPosition(b, pool)
			done := measureCPU(b, &cpu)
			runtime.ReadMemStats(&mem0) // inside: measureCPU reads /proc
			start := time.Now()
			own, err := run(perWriter)
			elapsed := time.Since(start)
			runtime.ReadMemStats(&mem1)
			done()
			c.wal += walPosition(b, pool) - wal0
			teardown()
			if err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			c.writes += n * perWriter
			c.elapsed += elapsed
			c.serverCPU += cpu.server
			if own > 0 {
				cpu.client = own
			} else {
				c.allocated += mem1.TotalAlloc - mem0.TotalAlloc
			}
			c.cpuSelf += cpu.client
		}
	}
	b.StopTimer()
	floor := contenders[0]
	rate := func(c *contender) float64 { return float64(c.writes) / c.elapsed.Seconds() }
	for _, c := range contenders {
		b.ReportMetric(rate(c), c.name+"-writes/s")
		if c != floor {
			b.ReportMetric(rate(c)/rate(floor), c.name+"/floor")
		}
		b.ReportMetric(float64(c.serverCPU.Microseconds())/float64(c.writes), c.name+"-server-cpu-µs/write")
		b.ReportMetric(float64(c.cpuSelf.Microseconds())/float64(c.writes), c.name+"-client-cpu-µs/write")
		b.ReportMetric(float64(c.wal)/float64(c.writes), c.name+"-WAL-B/write")
		if c.allocated > 0 {
			b.ReportMetric(float64(c.allocated)/float64(c.writes), c.name+"-client-B/write")
		}
	}
	if lg := contenders[len(contenders)-1]; lg.name == "langgraph" {
		for _, c := range contenders[1 : len(contenders)-1] {
			b.ReportMetric(rate(c)/rate(lg), c.name+"/langgraph")
		}
	}
	if batched.statements > 0 {
		b.ReportMetric(float64(batched.appends)/float64(batched.statements), "shared-appends/statement")
	}
	b.ReportMetric(load, "load1-before")
	b.ReportMetric(loadAverage(), "load1-after")
}

// pickContenders keeps the floor and the named contenders, for profiling
// one of them (CKPT_PEER_ONLY=keeper; "langgraph" is a name too): their
// ratios stay against the floor of the same run.
func pickContenders(all []*contender, names []string) []*contender {
	kept := []*contender{all[0]}
	for _, c := range all[1:] {
		if slices.Contains(names, c.name) {
			kept = append(kept, c)
		}
	}
	return kept
}

// loadAverage is the machine's one-minute load average (0 when unknown).
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// writeAll runs n writers, each making perWriter calls of op, and returns
// the first error.
func writeAll(n, perWriter int, op func(w, i int) error) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for w := range n {
		wg.Go(func() {
			for i := range perWriter {
				if err := op(w, i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// peerFloor is the floor: n connections, each autocommitting single-row
// INSERTs. A warm-up write per connection is not timed.
func peerFloor(dsn string) func(b *testing.B, n int) (func(int) (time.Duration, error), func()) {
	return func(b *testing.B, n int) (func(int) (time.Duration, error), func()) {
		ctx := context.Background()
		pool, err := pgxpool.New(ctx, fmt.Sprintf("%s pool_max_conns=%d pool_min_conns=%d", dsn, n, n))
		if err != nil {
			b.Fatal(err)
		}
		body := strings.Repeat("x", 200)
		insert := func(w, i int) error {
			_, err := pool.Exec(ctx, "INSERT INTO floor VALUES ($1, $2, $3)", w, i, body)
			return err
		}
		if err := writeAll(n, 1, insert); err != nil {
			b.Fatal(err)
		}
		return func(perWriter int) (time.Duration, error) { return 0, writeAll(n, perWriter, insert) }, pool.Close
	}
}

// peerStores is ckpt: with perWriter, one Store per writer (opened as a
// process opens it: the default pool); else one Store for all n writers
// (pool_max_conns=n, as ckpt serve would size it). Each writer appends
// notes to its own checkpoint; one untimed append per writer first, so
// that a Store's first append (the locking path) is not timed, as in a
// long-lived process. batched, when not nil, counts the shared Store's
// fast appends and statements in the timed part.
func peerStores(dsn string, perWriter bool, batched *batchCount) func(b *testing.B, n int) (func(int) (time.Duration, error), func()) {
	round := 0
	return func(b *testing.B, n int) (func(int) (time.Duration, error), func()) {
		ctx := context.Background()
		round++
		stores := make([]*pgstore.Store, n)
		for w := range n {
			if perWriter || w == 0 {
				conf := dsn
				if !perWriter {
					conf = fmt.Sprintf("%s pool_max_conns=%d", dsn, n)
				}
				s, err := pgstore.Open(ctx, conf)
				if err != nil {
					b.Fatal(err)
				}
				stores[w] = s
			} else {
				stores[w] = stores[0]
			}
		}
		kind := map[bool]string{true: "stores", false: "shared"}[perWriter]
		id := func(w int) string { return fmt.Sprintf("peer/%s-r%d-w%02d", kind, round, w) }
		if err := writeAll(n, 1, func(w, _ int) error {
			_, err := stores[w].Append(ctx, id(w), created("peer"), ckpt.AppendOptions{})
			return err
		}); err != nil {
			b.Fatal(err)
		}
		appendNote := func(w, i int) error {
			_, err := stores[w].Append(ctx, id(w), note(fmt.Sprint("step ", i)), ckpt.AppendOptions{})
			return err
		}
		if err := writeAll(n, 1, appendNote); err != nil {
			b.Fatal(err)
		}
		run := func(k int) (time.Duration, error) { return 0, writeAll(n, k, appendNote) }
		if batched != nil {
			run = func(k int) (time.Duration, error) {
				a, st := pgstore.FastAppends(stores[0]), pgstore.FastStatements(stores[0])
				err := writeAll(n, k, appendNote)
				batched.appends += pgstore.FastAppends(stores[0]) - a
				batched.statements += pgstore.FastStatements(stores[0]) - st
				return 0, err
			}
		}
		return run, func() {
			for w, s := range stores {
				if perWriter || w == 0 {
					s.Close()
				}
			}
		}
	}
}

// batchCount counts a shared Store's fast appends and the statements that
// wrote them in the timed rounds: appends per statement is the size of its
// group commits.
type batchCount struct{ appends, statements int64 }

// peerLangGraph starts testdata/peer/langgraph.mjs with node for n
// writers, keeping it (and its pool) for all rounds.
func peerLangGraph(b *testing.B, dsn, prefix string, n int) (func(b *testing.B, n int) (func(int) (time.Duration, error), func()), func()) {
	script, err := filepath.Abs("testdata/peer/langgraph.mjs")
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		b.Fatal(err)
	}
	cmd := osexec.Command("node", script)
	cmd.Env = append(os.Environ(), "PEER_LANGGRAPH="+prefix, "PEER_WRITERS="+strconv.Itoa(n),
		"PEER_PG_HOST="+cfg.ConnConfig.Host, "PEER_PG_USER="+cfg.ConnConfig.User, "PEER_PG_DB="+cfg.ConnConfig.Database)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("node (LangGraph): %v", err)
	}
	out := bufio.NewScanner(outPipe)
	stop := func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("node (LangGraph): %v", err)
		}
	}
	run := func(k int) (time.Duration, error) {
		if _, err := fmt.Fprintf(in, "run %d\n", k); err != nil {
			return 0, err
		}
		if !out.Scan() {
			return 0, fmt.Errorf("node (LangGraph) answered nothing: %v", out.Err())
		}
		var res struct {
			Puts       int     `json:"puts"`
			CPUSeconds float64 `json:"cpu_seconds"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			return 0, fmt.Errorf("node (LangGraph): %q: %v", out.Text(), err)
		}
		if res.Puts != n*k {
			return 0, fmt.Errorf("node (LangGraph) made %d puts, not %d", res.Puts, n*k)
		}
		return time.Duration(res.CPUSeconds * float64(time.Second)), nil
	}
	// A warm-up round: connections, the saver's prepared statements.
	if _, err := run(1); err != nil {
		stop()
		b.Fatal(err)
	}
	return func(*testing.B, int) (func(int) (time.Duration, error), func()) { return run, func() {} }, stop
}
