package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// BenchmarkHead: the feed's head, which commits a write of its own so that
// its cursor holds after a failover or a crash (docs/design.md,
// "Failover"), one call at a time. Floors from the same run, interleaved
// with it in rounds of 20 calls: reading the snapshot alone (the head
// before), and a one-row INSERT+COMMIT (one durable commit). Metrics:
// head-µs, read-µs, commit-µs, head/read and head/commit.
//
//	go test -run '^$' -bench Head -benchtime 400x ./pgstore
func BenchmarkHead(b *testing.B) {
	ctx := context.Background()
	s, dsn := openStore(b)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE bench_commit (n int)"); err != nil {
		b.Fatal(err)
	}
	ops := []func() error{
		func() error { _, err := s.Head(ctx); return err },
		func() error {
			var snap string
			return conn.QueryRow(ctx, "SELECT pg_current_snapshot()::text").Scan(&snap)
		},
		func() error { _, err := conn.Exec(ctx, "INSERT INTO bench_commit VALUES (1)"); return err },
	}
	var spent [3]time.Duration
	b.ResetTimer()
	for done := 0; done < b.N; done += 20 {
		for k, op := range ops {
			start := time.Now()
			for range min(20, b.N-done) {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			spent[k] += time.Since(start)
		}
	}
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) }
	b.ReportMetric(us(spent[0]), "head-µs")
	b.ReportMetric(us(spent[1]), "read-µs")
	b.ReportMetric(us(spent[2]), "commit-µs")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "head/read")
	b.ReportMetric(float64(spent[0])/float64(spent[2]), "head/commit")
}
