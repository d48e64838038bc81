package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
)

// BenchmarkKeyedAppendsAfterACheckpoint measures what a keyed append costs
// PostgreSQL on a checkpoint whose history holds 10,000 keyed events, right
// after a database checkpoint (the first change to a page after one writes
// the whole page to the WAL): with random keys, as the keeper and the spool
// made them before ckpt.NewKey, each append's ckpt_keys index entry lands
// on a random page of the checkpoint's keys; with ckpt.NewKey's
// time-ordered keys, on the last one. It reports the WAL per append and
// the key index's size.
//
//	go test -run '^$' -bench KeyedAppendsAfterACheckpoint -benchtime 2000x ./pgstore
func BenchmarkKeyedAppendsAfterACheckpoint(b *testing.B) {
	const hist = 10_000
	random := func() string {
		var k [12]byte
		_, _ = rand.Read(k[:])
		return "keeper-" + hex.EncodeToString(k[:])
	}
	ordered := func() string { return ckpt.NewKey("keeper-") }
	for _, c := range []struct {
		name string
		key  func() string
	}{{"random", random}, {"time-ordered", ordered}} {
		b.Run(c.name, func(b *testing.B) {
			s, dsn := openStore(b)
			defer s.Close()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			const id = "peer/keys"
			if _, err := s.Append(ctx, id, created("keys"), ckpt.AppendOptions{}); err != nil {
				b.Fatal(err)
			}
			keyed := func(i int) error {
				step := fmt.Sprint("step ", i)
				e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "kai-7"}, ckpt.Patch{CurrentStep: &step})
				e.Key = c.key()
				_, err := s.Append(ctx, id, e, ckpt.AppendOptions{})
				return err
			}
			for i := range hist {
				if err := keyed(i); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
				b.Fatal(err)
			}
			wal0 := walPosition(b, conn)
			n := 0
			for b.Loop() {
				if err := keyed(n); err != nil {
					b.Fatal(err)
				}
				n++
			}
			wal := walPosition(b, conn) - wal0
			var pages int64
			if err := conn.QueryRow(ctx, "SELECT pg_relation_size('ckpt_keys_pkey') / 8192").Scan(&pages); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(wal)/float64(n), "WAL-B/append")
			b.ReportMetric(float64(pages), "key-index-pages")
		})
	}
}
