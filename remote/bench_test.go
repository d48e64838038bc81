package remote_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/remote"
)

// BenchmarkAppend64 appends from 64 concurrent clients, each to its own
// checkpoint, to a store in-process (the floor) and through ckpt serve
// (an in-process server on loopback, HTTP/JSON, token checked on every
// request), over filestore and pgstore. It reports appends per second and
// the p99 latency of one append; the served runs also report their
// throughput's ratio to the in-process one ("x-inprocess"). Run with
//
//	go test -run '^$' -bench Append64 -benchtime 4000x ./remote
func BenchmarkAppend64(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) ckpt.Store
	}{
		{"filestore", func(b *testing.B) ckpt.Store { return newFileStore(b) }},
		{"pgstore", func(b *testing.B) ckpt.Store {
			cluster.Need(b)
			st, err := pgstoreOpen(cluster.DSN(cluster.NewDatabase(b), "pool_max_conns=64"))
			if err != nil {
				b.Fatal(err)
			}
			return st
		}},
	}
	for _, be := range backends {
		var floor float64
		b.Run(be.name+"/inprocess", func(b *testing.B) {
			st := be.open(b)
			defer st.Close()
			floor = append64(b, st)
		})
		b.Run(be.name+"/served", func(b *testing.B) {
			st := be.open(b)
			defer st.Close()
			tokens, admin := fleetTokensB(b)
			srv, err := server.New(st, server.Options{Tokens: tokens, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			defer hs.Close()
			c, err := remote.New(hs.URL, remote.Options{Token: admin})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if rate := append64(b, c); floor > 0 {
				b.ReportMetric(rate/floor, "x-inprocess")
			}
		})
	}
}

// append64 runs b.N appends from 64 goroutines and reports appends/s and
// the p99 latency; it returns the rate.
func append64(b *testing.B, st ckpt.Store) float64 {
	const clients = 64
	ctx := context.Background()
	for i := range clients {
		if _, err := st.Append(ctx, fmt.Sprintf("bench/%02d", i), ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([][]time.Duration, clients)
	b.ResetTimer()
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
				if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
					b.Error(err)
					return
				}
				lat[i] = append(lat[i], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	rate := float64(len(all)) / elapsed.Seconds()
	b.ReportMetric(rate, "appends/s")
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "ms-p99")
	}
	return rate
}
