package web

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/memstore"
)

// seedMany writes n live checkpoints, a tenth of them in one of ten parents.
func seedMany(b *testing.B, st ckpt.Store, n int) {
	b.Helper()
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	for i := range n {
		p := ckpt.Patch{Title: ptr(fmt.Sprintf("task %d", i)), Status: ptr(ckpt.StatusInProgress), Agent: &ckpt.Agent{ID: fmt.Sprintf("agent-%d", i%50)}}
		if i%10 == 0 {
			p.Parent = ptr(fmt.Sprintf("plan-%d", i%100))
		}
		e := ckpt.MustEvent(ckpt.EventCreated, at, ckpt.Actor{Agent: "bench"}, ckpt.Created{Patch: p})
		if _, err := st.Append(ctx, fmt.Sprintf("fleet/%06d", i), e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOverview10k is the dashboard's first page at 10,000 checkpoints
// (100 rows and the presence counts), against the floor of listing every
// summary once from the same store in the same run: the counts need that.
// Run: go test -run '^$' -bench Overview10k -benchtime 20x ./web
func BenchmarkOverview10k(b *testing.B) {
	b.Run("memstore", func(b *testing.B) {
		st := memstore.New()
		seedMany(b, st, 10_000)
		benchOverview(b, st)
	})
	b.Run("filestore", func(b *testing.B) {
		st, err := filestore.Init(b.TempDir()+"/.ckpt", filestore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		seedMany(b, st, 10_000)
		benchOverview(b, st)
	})
}

func benchOverview(b *testing.B, st ckpt.Store) {
	srv := httptest.NewServer(New(Options{Store: st}))
	defer srv.Close()
	ctx := context.Background()
	floor := medianOf(b, 10, func() {
		if _, err := ckpt.ListAll(ctx, st, ckpt.Filter{}); err != nil {
			b.Fatal(err)
		}
	})
	var bytes int
	page := medianOf(b, b.N, func() {
		res, err := http.Get(srv.URL + "/ui/api/overview")
		if err != nil {
			b.Fatal(err)
		}
		var buf strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&buf)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("overview: %s", res.Status)
		}
		bytes = buf.Len()
	})
	b.ReportMetric(float64(page.Microseconds())/1000, "page-ms")
	b.ReportMetric(float64(floor.Microseconds())/1000, "listall-floor-ms")
	b.ReportMetric(float64(page)/float64(floor), "x-floor")
	b.ReportMetric(float64(bytes)/1024, "page-KiB")
}

// medianOf runs fn n times and returns the median duration.
func medianOf(b *testing.B, n int, fn func()) time.Duration {
	b.Helper()
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		fn()
		ds[i] = time.Since(t0)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[n/2]
}
