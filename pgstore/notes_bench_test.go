package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
)

// BenchmarkAppendToAnOldCheckpoint alternates blocks of appends to a young
// checkpoint (a few events: the floor) and to an old one (1,000 notes of
// about 120 bytes), over one Store, in one run: old/young is the ratio of
// their wall time per append, and WAL-B/append each one's WAL per append
// (pg_current_wal_insert_lsn, read between the blocks). The state row is
// rewritten by every append, so before the notes were bounded
// (ckpt.MaxNotesBytes) the old one wrote its whole 96 KB of notes
// (TOASTed) each time.
//
//	go test -run '^$' -bench AppendToAnOldCheckpoint -benchtime 200x ./pgstore
func BenchmarkAppendToAnOldCheckpoint(b *testing.B) {
	const block = 10
	ctx := context.Background()
	s, dsn := openStore(b)
	defer s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	ids := []string{"kai-7/young", "kai-7/old"}
	for _, id := range ids {
		if _, err := s.Append(ctx, id, created(id), ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	text := strings.Repeat("what the agent saw and what it will do next. ", 2)
	for i := range 1000 {
		if _, err := s.Append(ctx, ids[1], note(fmt.Sprintf("%04d %s", i, text)), ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	var wall [2]time.Duration
	var wal [2]int64
	n := 0
	for b.Loop() {
		for k, id := range ids {
			w0, t0 := walPosition(b, conn), time.Now()
			for j := range block {
				step := fmt.Sprint("step ", n*block+j)
				e := ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "kai-7"}, ckpt.Patch{CurrentStep: &step})
				if _, err := s.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			wall[k] += time.Since(t0)
			wal[k] += walPosition(b, conn) - w0
		}
		n++
	}
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "old/young")
	b.ReportMetric(float64(wal[0])/float64(n*block), "young-WAL-B/append")
	b.ReportMetric(float64(wal[1])/float64(n*block), "old-WAL-B/append")
}
