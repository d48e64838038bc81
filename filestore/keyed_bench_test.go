package filestore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// BenchmarkKeyedAppendByAFreshStore is a hook's append on a checkpoint
// with a long history: each append opens the store afresh (as each `ckpt
// hook` process does, with no memory of the keys it wrote), on a
// checkpoint of 1,500 keyed events, so a keyed append searches the last
// ckpt.KeyWindow lines of the history for its key. Blocks of keyed and
// unkeyed appends alternate in one run: keyed/unkeyed-cpu is the ratio of
// their CPU per append (the floor: the same append without a key).
//
//	go test -run '^$' -bench KeyedAppendByAFreshStore -benchtime 200x ./filestore
func BenchmarkKeyedAppendByAFreshStore(b *testing.B) {
	const block, id = 10, "kai-7/old"
	s := newStore(b, Options{})
	benchCheckpoint(b, s, id)
	ctx := context.Background()
	for i := range 1500 {
		e := benchEvent(i)
		e.Key = fmt.Sprint("hook:tool:5c00-five-hundred:toolu_", i)
		if _, err := s.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	var cpu, wall [2]time.Duration
	n := 0
	for b.Loop() {
		for k := range 2 {
			c0, t0 := cpuTime(b), time.Now()
			for range block {
				n++
				st, err := Open(s.Dir())
				if err != nil {
					b.Fatal(err)
				}
				e := benchEvent(n)
				if k == 1 {
					e.Key = fmt.Sprint("hook:tool:5c00-five-hundred:toolu_new", n)
				}
				if _, err := st.Append(ctx, id, e, ckpt.AppendOptions{}); err != nil {
					b.Fatal(err)
				}
				st.Close()
			}
			cpu[k] += cpuTime(b) - c0
			wall[k] += time.Since(t0)
		}
	}
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "keyed/unkeyed-cpu")
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "keyed/unkeyed")
	b.ReportMetric(float64(cpu[1].Nanoseconds())/float64(n/2), "keyed-cpu-ns/op")
}
