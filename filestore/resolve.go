package filestore

import (
	"context"
	"runtime"
	"sync"

	"github.com/ckpt-dev/ckpt"
)

// resolveChunk is how many candidates a listing hands its resolver at a
// time.
const resolveChunk = 64

// resolver turns a batch of listing candidates into summaries with
// liveness (summaryFor) on GOMAXPROCS goroutines while the listing is
// still reading the index for more: the index walk (one goroutine) and
// the stats and decodes overlap. Candidates are handed over in chunks;
// wait returns when every one is resolved. Used by one listing at a time.
type resolver struct {
	ctx     context.Context
	s       *Store
	dir     listDir
	flt     *ckpt.Filter
	settled bool
	json    bool // each summary's JSON to rows (rowFor)

	slots
	n    int // candidates added
	sent int // candidates handed to the workers
	work chan [2]int
	wg   sync.WaitGroup
}

// slots are a resolver's fixed-length arrays: workers index them while
// add fills cands.
type slots struct {
	cands []ientry
	sums  []ckpt.Summary
	found []bool
	errs  []error
	rows  [][]byte // with json: each summary's JSON (reused)
}

var resolverSlots sync.Pool

// release hands the slots back for the next batch; the results wait
// returned must no longer be used.
func (r *resolver) release() {
	clear(r.cands[:r.n]) // drop the references to index bytes
	resolverSlots.Put(&r.slots)
}

// newResolver starts a resolver for up to capacity candidates.
func (s *Store) newResolver(ctx context.Context, dir listDir, flt *ckpt.Filter, settled bool, capacity int, json bool) *resolver {
	r := &resolver{ctx: ctx, s: s, dir: dir, flt: flt, settled: settled, json: json, work: make(chan [2]int, capacity/resolveChunk+1)}
	// The slots of the last batch, reused: a listing of 100,000 in
	// batches of 1,000 would otherwise fault in a fresh megabyte of
	// summaries per batch (their contents are copied out by listView).
	if b, ok := resolverSlots.Get().(*slots); ok && len(b.cands) >= capacity {
		r.slots = *b
		clear(r.sums[:capacity])
		clear(r.errs[:capacity])
	} else {
		r.slots = slots{make([]ientry, capacity), make([]ckpt.Summary, capacity), make([]bool, capacity), make([]error, capacity), make([][]byte, capacity)}
	}
	for range runtime.GOMAXPROCS(0) {
		r.wg.Go(r.run)
	}
	return r
}

// add hands over one more candidate; it must not be called more than
// capacity times.
func (r *resolver) add(e ientry) {
	r.cands[r.n] = e
	r.n++
	if r.n-r.sent == resolveChunk {
		r.flush()
	}
}

func (r *resolver) flush() {
	if r.sent < r.n {
		r.work <- [2]int{r.sent, r.n}
		r.sent = r.n
	}
}

// wait resolves what is left and returns the n candidates added, their
// summaries, whether the filter matches each (false too for checkpoints
// gone) and each one's error.
func (r *resolver) wait() (cands []ientry, sums []ckpt.Summary, found []bool, errs []error) {
	r.flush()
	close(r.work)
	r.wg.Wait()
	return r.cands[:r.n], r.sums[:r.n], r.found[:r.n], r.errs[:r.n]
}

func (r *resolver) run() {
	for span := range r.work {
		for j := span[0]; j < span[1] && r.ctx.Err() == nil; j++ {
			if r.json {
				r.found[j], r.errs[j] = r.s.rowFor(r.dir, r.cands[j], r.flt, r.settled, &r.sums[j], &r.rows[j])
				continue
			}
			r.found[j], r.errs[j] = r.s.summaryFor(r.dir, r.cands[j], r.flt, r.settled, &r.sums[j])
		}
	}
}
