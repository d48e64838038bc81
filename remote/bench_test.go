package remote_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/remote"
)

// BenchmarkAppend64 appends from 64 concurrent clients, each to its own
// checkpoint, through ckpt serve (an in-process server on loopback,
// HTTP/JSON, the token checked on every request: a token file over
// filestore, the database's tokens over pgstore, as ckpt serve keeps
// them) against its floor, the same Store called in-process, over
// filestore and pgstore. The floor's events carry an idempotency key as
// the remote client's do (every remote append is keyed, so a retry
// replays); the same Store with unkeyed events is reported beside it.
// Rounds alternate the floor, the served appends, the served appends
// that ask for no state back (Prefer: return=minimal) and the unkeyed
// floor, b.N appends each, on the same store. It reports the median over
// rounds of each rate over the floor's in the same round (x-inprocess,
// x-inprocess-minimal, x-inprocess-inprocess-unkeyed; the goal is at least 0.5), the
// p99 latency of an append of each, and the CPU per append of this
// process (clients, server and store together; cpu-us) and of PostgreSQL
// (pg-cpu-us). Run with
//
//	go test -run '^$' -bench Append64 -benchtime 4000x ./remote
func BenchmarkAppend64(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) (ckpt.Store, server.TokenStore, string)
	}{
		{"filestore", func(b *testing.B) (ckpt.Store, server.TokenStore, string) {
			tokens, admin := fleetTokensB(b)
			return newFileStore(b), tokens, admin
		}},
		{"pgstore", func(b *testing.B) (ckpt.Store, server.TokenStore, string) {
			cluster.Need(b)
			dsn := cluster.DSN(cluster.NewDatabase(b), "pool_max_conns=64")
			st, err := pgstoreOpen(dsn)
			if err != nil {
				b.Fatal(err)
			}
			tokens, err := server.OpenPGTokens(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(tokens.Close)
			admin, err := server.Bootstrap(context.Background(), tokens, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			return st, tokens, admin
		}},
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			st, tokens, admin := be.open(b)
			defer st.Close()
			srv, err := server.New(st, server.Options{Tokens: tokens, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			// role=server labels the server's CPU in a -cpuprofile.
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				pprof.Do(r.Context(), serverRole, func(context.Context) { srv.ServeHTTP(w, r) })
			}))
			defer hs.Close()
			c, err := remote.New(hs.URL, remote.Options{Token: admin})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			pg := be.name == "pgstore"
			appendRounds(b, []variant{
				{"inprocess", st, context.Background(), true},
				{"served", c, context.Background(), false},
				{"served-minimal", c, remote.WithoutState(context.Background()), false},
				{"inprocess-unkeyed", st, context.Background(), false},
			}, pg)
		})
	}
}

// variant is one way of appending that appendRounds compares.
type variant struct {
	name  string
	st    ckpt.Store
	ctx   context.Context
	keyed bool // give each event an idempotency key, as the remote client does
}

// appendRounds runs 3 rounds of b.N appends by 64 clients with each
// variant in turn (each round starting with the next one) and reports the rates' ratios to the first variant's
// in the same round (medians), each variant's p99 latency, and its CPU
// per append.
func appendRounds(b *testing.B, vs []variant, pg bool) {
	const clients, rounds = 64, 3
	for i := range clients {
		id := fmt.Sprintf("bench/%02d", i)
		if _, err := vs[0].st.Append(context.Background(), id, ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	rates := make([][]float64, len(vs))
	lats := make([][]time.Duration, len(vs))
	cpu := make([]time.Duration, len(vs))
	pgcpu := make([]time.Duration, len(vs))
	b.ResetTimer()
	for r := range rounds {
		// Each round starts with another variant: the histories grow as
		// the rounds go, and filestore's key search reads more of a longer
		// one, so a fixed order would favour the variant that goes first.
		for j := range vs {
			k := (r + j) % len(vs)
			v := vs[k]
			// PostgreSQL's CPU is read first and last: reading it globs
			// /proc, tens of milliseconds of this process's own CPU that
			// would count as the variant's.
			p0 := time.Duration(0)
			if pg {
				p0 = pgCPU(b)
			}
			c0 := processCPU(b)
			rate, lat := append64(b, v, clients)
			cpu[k] += processCPU(b) - c0
			if pg {
				pgcpu[k] += pgCPU(b) - p0
			}
			rates[k] = append(rates[k], rate)
			lats[k] = append(lats[k], lat...)
		}
	}
	b.StopTimer()
	n := float64(rounds * b.N)
	for k, v := range vs {
		if k > 0 {
			ratios := make([]float64, rounds)
			for r := range rounds {
				ratios[r] = rates[k][r] / rates[0][r]
			}
			b.ReportMetric(median(ratios), "x-"+vs[0].name+suffix(v.name))
		}
		slices.Sort(lats[k])
		b.ReportMetric(float64(lats[k][len(lats[k])*99/100].Microseconds())/1000, "ms-p99-"+v.name)
		b.ReportMetric(median(rates[k]), "appends/s-"+v.name)
		b.ReportMetric(float64(cpu[k].Microseconds())/n, "cpu-us-"+v.name)
		if pg {
			b.ReportMetric(float64(pgcpu[k].Microseconds())/n, "pg-cpu-us-"+v.name)
		}
	}
}

// suffix names a variant in a ratio's unit ("served" is the plain one).
func suffix(name string) string {
	if name == "served" {
		return ""
	}
	return "-" + strings.TrimPrefix(name, "served-")
}

// append64 runs b.N appends (notes) from clients goroutines, each to its
// own checkpoint, and returns the rate and every append's latency.
func append64(b *testing.B, v variant, clients int) (float64, []time.Duration) {
	lat := make([][]time.Duration, clients)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		n := b.N / clients
		if i < b.N%clients {
			n++
		}
		wg.Go(func() {
			id := fmt.Sprintf("bench/%02d", i)
			for j := range n {
				t := time.Now()
				e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Note{Text: fmt.Sprint(j)})
				var opts ckpt.AppendOptions
				if v.keyed { // as the remote client keys it: a key made for the append
					e.Key, opts.KeyOrigin = remote.NewKey(), ckpt.KeyNew
				}
				if _, err := v.st.Append(v.ctx, id, e, opts); err != nil {
					b.Error(err)
					return
				}
				lat[i] = append(lat[i], time.Since(t))
			}
		})
	}
	wg.Wait()
	all := slices.Concat(lat...)
	return float64(len(all)) / time.Since(start).Seconds(), all
}
