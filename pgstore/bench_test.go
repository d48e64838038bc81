package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// Benchmarks run against the package's throwaway cluster with PostgreSQL's
// durable defaults (fsync and synchronous_commit on). Each reports a floor
// measured in the same run on the same server, and the ratio to it:
//
//	go test -run '^$' -bench . -benchtime 20000x ./pgstore

const benchWriters = 64

// runWriters runs n operations split over benchWriters goroutines and
// returns the operations per second.
func runWriters(b *testing.B, n int, op func(w, i int) error, cpu *cpuUse) float64 {
	b.Helper()
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	done := measureCPU(b, cpu)
	defer done()
	start := time.Now()
	for w := range benchWriters {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(w, i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkAppend64Writers: 64 concurrent writers, each on its own
// checkpoint, make b.N durable appends in all; the floor is b.N single-row
// INSERT+COMMIT by 64 writers on the same server, run right after.
// Metrics: appends/s, floor-commits/s, append/floor (a rate ratio: 1 is
// the floor's speed).
func BenchmarkAppend64Writers(b *testing.B) {
	ctx := context.Background()
	s, dsn := openStore(b, fmt.Sprintf("pool_max_conns=%d", benchWriters))
	defer s.Close()
	for w := range benchWriters {
		mustAppend(b, s, fmt.Sprintf("bench/w%02d", w), created("writer"))
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, "CREATE TABLE floor (w int, i int, body text)"); err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("x", 200)
	b.ResetTimer()
	var appendCPU, floorCPU cpuUse
	appends := runWriters(b, b.N, func(w, i int) error {
		_, err := s.Append(ctx, fmt.Sprintf("bench/w%02d", w), note(fmt.Sprint("step ", i)), ckpt.AppendOptions{})
		return err
	}, &appendCPU)
	floor := runWriters(b, b.N, func(w, i int) error {
		_, err := pool.Exec(ctx, "INSERT INTO floor VALUES ($1, $2, $3)", w, i, body)
		return err
	}, &floorCPU)
	b.StopTimer()
	if n := pgstore.FastStatements(s); n > 0 {
		b.ReportMetric(float64(pgstore.FastAppends(s))/float64(n), "appends/statement")
	}
	b.ReportMetric(appends, "appends/s")
	b.ReportMetric(floor, "floor-commits/s")
	b.ReportMetric(appends/floor, "append/floor")
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(per(appendCPU.server), "server-cpu-µs/append")
	b.ReportMetric(per(appendCPU.client), "client-cpu-µs/append")
	b.ReportMetric(per(floorCPU.server), "server-cpu-µs/floor")
}

// cpuUse is the processor time a workload took in the server and in this
// process (the client).
type cpuUse struct{ server, client time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU returns a function that, called after a workload, stores the
// CPU it used in u.
func measureCPU(b *testing.B, u *cpuUse) func() {
	server, err := cluster.CPU()
	if err != nil {
		b.Fatal(err)
	}
	client := processCPU()
	return func() {
		c := processCPU()
		s, err := cluster.CPU()
		if err != nil {
			b.Fatal(err)
		}
		u.server, u.client = s-server, c-client
	}
}

// BenchmarkGetLatest100k reads the latest state of a checkpoint with
// 100,000 events; the floor is the same row fetched raw (no decode).
func BenchmarkGetLatest100k(b *testing.B) {
	ctx := context.Background()
	s, dsn := openStore(b)
	defer s.Close()
	h := make([]ckpt.Event, 100_000)
	h[0] = created("long")
	for i := 1; i < len(h); i++ {
		step := fmt.Sprintf("step %d", i)
		h[i] = ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "bench"}, ckpt.Patch{CurrentStep: &step})
	}
	if err := pgstore.BulkLoad(ctx, s, map[string][]ckpt.Event{"long": h}); err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	// Each iteration times one of each, so that both see the same load.
	var get, floor time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		c, err := s.Get(ctx, "long", 0)
		if err != nil || c.Rev != 100_000 {
			b.Fatalf("Get: rev %v, %v", c, err)
		}
		get += time.Since(start)
		start = time.Now()
		var raw []byte
		if err := pool.QueryRow(ctx, "SELECT state FROM ckpt_checkpoints WHERE id = $1", "long").Scan(&raw); err != nil {
			b.Fatal(err)
		}
		floor += time.Since(start)
	}
	get /= time.Duration(b.N)
	floor /= time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(get.Microseconds()), "get-µs")
	b.ReportMetric(float64(floor.Microseconds()), "floor-µs")
	b.ReportMetric(float64(get)/float64(floor), "get/floor")
}

// BenchmarkListPage100k lists pages of 50 summaries out of 100,000
// checkpoints, at cursors spread over the store, unfiltered and with a
// status filter; the floor is the same page of IDs and summaries fetched
// raw.
func BenchmarkListPage100k(b *testing.B) {
	ctx := context.Background()
	s, dsn := openStore(b)
	defer s.Close()
	const n = 100_000
	hs := make(map[string][]ckpt.Event, n)
	statuses := []ckpt.Status{ckpt.StatusInProgress, ckpt.StatusWaiting, ckpt.StatusBlocked, ckpt.StatusDone}
	for i := range n {
		st := statuses[i%len(statuses)]
		title := fmt.Sprint("task ", i)
		hs[fmt.Sprintf("team-%02d/task-%06d", i%50, i)] = []ckpt.Event{ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "bench"},
			ckpt.Created{Patch: ckpt.Patch{Title: &title, Status: &st, Agent: &ckpt.Agent{ID: fmt.Sprint("agent-", i%100)}}})}
	}
	if err := pgstore.BulkLoad(ctx, s, hs); err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	after := func(i int) string { return fmt.Sprintf("team-%02d/task-%06d", (i*7)%50, (i*7919)%n) }
	// Each iteration times one of each, so that all see the same load.
	var list, filtered, floor time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		p, err := s.List(ctx, ckpt.ListOptions{Limit: 50, After: after(i)})
		if err != nil || len(p.Items) == 0 {
			b.Fatalf("List: %d items, %v", len(p.Items), err)
		}
		list += time.Since(start)
		start = time.Now()
		f := ckpt.Filter{Status: []ckpt.Status{ckpt.StatusBlocked}}
		if _, err := s.List(ctx, ckpt.ListOptions{Filter: f, Limit: 50, After: after(i)}); err != nil {
			b.Fatal(err)
		}
		filtered += time.Since(start)
		start = time.Now()
		rows, err := pool.Query(ctx, "SELECT id, summary, beat, presence FROM ckpt_checkpoints WHERE id > $1 ORDER BY id LIMIT 51", after(i))
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		floor += time.Since(start)
	}
	list /= time.Duration(b.N)
	filtered /= time.Duration(b.N)
	floor /= time.Duration(b.N)
	b.StopTimer()
	b.ReportMetric(float64(list.Microseconds()), "page-µs")
	b.ReportMetric(float64(filtered.Microseconds()), "filtered-page-µs")
	b.ReportMetric(float64(floor.Microseconds()), "floor-µs")
	b.ReportMetric(float64(list)/float64(floor), "page/floor")
}
