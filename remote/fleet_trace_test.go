package remote_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The fleet benchmark's diagnosis: where a slow request waits. Each
// process reports its goroutines' scheduling latency (from runnable to
// running: a process short of CPU, or of threads the kernel runs) and its
// garbage collector's pauses; the servers' process also samples what
// PostgreSQL's busy backends wait on (pg_stat_activity, every 10 ms).

// schedSample is a process's scheduling and GC histograms at one moment.
type schedSample struct {
	lat, gc *metrics.Float64Histogram
	cycles  uint64
}

func readSched() schedSample {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/sched/pauses/total/gc:seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return schedSample{lat: s[0].Value.Float64Histogram(), gc: s[1].Value.Float64Histogram(), cycles: s[2].Value.Uint64()}
}

// since describes the interval from s0 to s: the p99 and the worst of the
// scheduling latency and of the GC pauses, and the GC cycles.
func (s schedSample) since(s0 schedSample) string {
	lat50, lat99, latMax := quantiles(s.lat, s0.lat)
	_, gc99, gcMax := quantiles(s.gc, s0.gc)
	return fmt.Sprintf("scheduling latency p50 %v p99 %v max %v; %d GC cycles, pause p99 %v max %v",
		lat50, lat99, latMax, s.cycles-s0.cycles, gc99, gcMax)
}

// quantiles returns the p50, p99 and max of the observations histogram h
// gained since h0 (each the upper bound of its bucket).
func quantiles(h, h0 *metrics.Float64Histogram) (q50, q99, top time.Duration) {
	counts := slices.Clone(h.Counts)
	var n uint64
	for i := range counts {
		counts[i] -= h0.Counts[i]
		n += counts[i]
	}
	at := func(q float64) time.Duration {
		want, seen := uint64(math.Ceil(q*float64(n))), uint64(0)
		for i, c := range counts {
			seen += c
			if c > 0 && seen >= want {
				up := h.Buckets[i+1]
				if math.IsInf(up, 1) {
					up = h.Buckets[i]
				}
				return time.Duration(up * float64(time.Second)).Round(time.Microsecond)
			}
		}
		return 0
	}
	if n == 0 {
		return 0, 0, 0
	}
	return at(0.5), at(0.99), at(1)
}

// fleetTrace samples the servers' side while the fleet runs, and times
// the floor of a durable write: one INSERT+COMMIT every 50 ms on a
// connection of its own.
type fleetTrace struct {
	sched0 schedSample
	sched  string
	cancel context.CancelFunc
	done   sync.WaitGroup

	samples int
	waits   map[string]int  // "running" or "type/event" → backends seen so
	oldest  []time.Duration // each sample's oldest transaction holding an ID: the change feed's horizon waits for it
	holders map[string]int  // what that transaction was running, when older than 100 ms
	commits []time.Duration // the floor: a durable INSERT+COMMIT every 50 ms
}

func startFleetTrace(b *testing.B, dsn string) *fleetTrace {
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	probe, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := probe.Exec(context.Background(), "CREATE TABLE IF NOT EXISTS fleet_probe (n int8)"); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &fleetTrace{sched0: readSched(), cancel: cancel, waits: map[string]int{}, holders: map[string]int{}}
	t.done.Go(func() {
		defer probe.Close(context.Background())
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			t0 := time.Now()
			if _, err := probe.Exec(ctx, "INSERT INTO fleet_probe VALUES ($1)", n); err == nil {
				t.commits = append(t.commits, time.Since(t0))
			}
		}
	})
	t.done.Go(func() {
		defer conn.Close(context.Background())
		const q = `SELECT coalesce(wait_event_type || '/' || wait_event, 'running'), count(*) FROM pg_stat_activity
			WHERE state = 'active' AND pid <> pg_backend_pid() AND datname = current_database() GROUP BY 1`
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				continue
			}
			for rows.Next() {
				var what string
				var n int
				if rows.Scan(&what, &n) == nil {
					t.waits[what] += n
				}
			}
			rows.Close()
			t.samples++
			if t.samples%5 != 0 {
				continue // the horizon every 50 ms: the sampler's own PostgreSQL CPU counts in pg-cpu-cores
			}
			var age float64
			var what string
			if conn.QueryRow(ctx, oldestSQL, pgx.QueryExecModeSimpleProtocol).Scan(&age, &what) == nil {
				d := time.Duration(age * float64(time.Second))
				t.oldest = append(t.oldest, d)
				if d > 100*time.Millisecond {
					t.holders[what]++
				}
			}
		}
	})
	return t
}

// oldestSQL reads the age of the oldest transaction of the database that
// holds a transaction ID (the change feed reads nothing past it) and the
// start of its statement (0 and "" when there is none).
const oldestSQL = `SELECT coalesce((SELECT extract(epoch FROM clock_timestamp() - xact_start)::float8 FROM pg_stat_activity a
		WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() AND datname = current_database() ORDER BY xact_start LIMIT 1), 0),
	coalesce((SELECT state || ': ' || left(query, 48) FROM pg_stat_activity a
		WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() AND datname = current_database() ORDER BY xact_start LIMIT 1), '')`

func (t *fleetTrace) stop() {
	t.sched = readSched().since(t.sched0)
	t.cancel()
	t.done.Wait()
}

// report logs the servers' scheduling and what PostgreSQL's active
// backends were doing, as the mean number of backends in each state.
func (t *fleetTrace) report(b *testing.B) {
	b.Logf("fleet-trace: the servers' process: %s", t.sched)
	if t.samples == 0 {
		return
	}
	keys := slices.SortedFunc(maps.Keys(t.waits), func(x, y string) int { return t.waits[y] - t.waits[x] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.3f", k, float64(t.waits[k])/float64(t.samples)))
	}
	b.Logf("fleet-trace: PostgreSQL's active backends (mean over %d samples): %s", t.samples, strings.Join(parts, ", "))
	keys = slices.SortedFunc(maps.Keys(t.holders), func(x, y string) int { return t.holders[y] - t.holders[x] })
	parts = parts[:0]
	for _, k := range keys[:min(4, len(keys))] {
		parts = append(parts, fmt.Sprintf("%q %d", k, t.holders[k]))
	}
	b.Logf("fleet-trace: the oldest transaction holding an ID (the feed's horizon): p50 %.1f ms, p99 %.1f ms; over 100 ms, in: %s",
		p50(t.oldest), p99(t.oldest), strings.Join(parts, ", "))
}
